import ChimeCore
import Foundation

// Linux has no CoreLocation. These are the parts a location trigger needs, under CoreLocation's
// names, so code that makes a `UNLocationNotificationTrigger` compiles unchanged (drop
// `import CoreLocation`).

/// Degrees of latitude or longitude.
public typealias CLLocationDegrees = Double
/// A distance in metres.
public typealias CLLocationDistance = Double

/// A latitude and longitude.
public struct CLLocationCoordinate2D: Sendable, Hashable {
    public var latitude: CLLocationDegrees
    public var longitude: CLLocationDegrees
    public init() { self.init(latitude: 0, longitude: 0) }
    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.latitude = latitude
        self.longitude = longitude
    }
    var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}

/// Whether a coordinate is a valid position.
public func CLLocationCoordinate2DIsValid(_ coordinate: CLLocationCoordinate2D) -> Bool { coordinate.coordinate.isValid }

/// A geographic region.
open class CLRegion: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: the flags are guarded by the lock below; the identifier is immutable.
    public let identifier: String
    private let lock = NSLock()
    private var entry = true
    private var exit = true

    init(identifier: String) { self.identifier = identifier }

    /// Whether entering the region fires its triggers (default `true`).
    public var notifyOnEntry: Bool {
        get { lock.withLock { entry } }
        set { lock.withLock { entry = newValue } }
    }
    /// Whether leaving the region fires its triggers (default `true`).
    public var notifyOnExit: Bool {
        get { lock.withLock { exit } }
        set { lock.withLock { exit = newValue } }
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A circle around a point.
///
/// ```swift
/// let office = CLCircularRegion(center: CLLocationCoordinate2D(latitude: 52.52, longitude: 13.40),
///                               radius: 100, identifier: "office")
/// office.notifyOnExit = false
/// ```
open class CLCircularRegion: CLRegion, @unchecked Sendable {
    public let center: CLLocationCoordinate2D
    public let radius: CLLocationDistance

    public init(center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String) {
        self.center = center
        self.radius = radius
        super.init(identifier: identifier)
    }

    /// Whether the coordinate lies in the circle.
    open func contains(_ coordinate: CLLocationCoordinate2D) -> Bool { value.contains(coordinate.coordinate) }

    var value: CircularRegion {
        CircularRegion(identifier: identifier, center: center.coordinate, radius: radius,
                       notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit)
    }

    convenience init(value: CircularRegion) {
        self.init(center: CLLocationCoordinate2D(latitude: value.center.latitude, longitude: value.center.longitude),
                  radius: value.radius, identifier: value.identifier)
        notifyOnEntry = value.notifyOnEntry
        notifyOnExit = value.notifyOnExit
    }
}
