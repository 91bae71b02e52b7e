import ChimeCore
import Foundation
import Synchronization

// Linux has no CoreLocation. These are the parts a location trigger and the code around it need,
// under CoreLocation's names, so code that makes a `UNLocationNotificationTrigger` compiles
// unchanged (drop `import CoreLocation`). What is left out is listed in
// docs/differences-from-apple.md.

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

/// Whether a coordinate is a valid position: latitude -90…90, longitude -180…180.
public func CLLocationCoordinate2DIsValid(_ coordinate: CLLocationCoordinate2D) -> Bool {
    coordinate.coordinate.isValid
}

/// A coordinate from a latitude and a longitude, as CoreLocation's C function makes it.
///
/// ```swift
/// let office = CLLocationCoordinate2DMake(52.52, 13.40)
/// ```
public func CLLocationCoordinate2DMake(_ latitude: CLLocationDegrees, _ longitude: CLLocationDegrees)
    -> CLLocationCoordinate2D
{
    CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
}

/// CoreLocation's invalid coordinate (latitude and longitude -180).
public let kCLLocationCoordinate2DInvalid = CLLocationCoordinate2D(latitude: -180, longitude: -180)

/// The largest distance, as CoreLocation defines it.
public let CLLocationDistanceMax: CLLocationDistance = .greatestFiniteMagnitude

/// A position with its accuracy and time, as CoreLocation reports one. Chime has no location
/// services; a `CLLocation` is for the code around location triggers — making a region from a
/// saved place, measuring how far two places are apart.
///
/// ```swift
/// let home = CLLocation(latitude: 52.5200, longitude: 13.4050)
/// let region = CLCircularRegion(center: home.coordinate, radius: 150, identifier: "home")
/// let metres = home.distance(from: CLLocation(latitude: 52.5163, longitude: 13.3777))   // ≈ 1,900
/// ```
open class CLLocation: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    public let coordinate: CLLocationCoordinate2D
    /// Metres above sea level.
    public let altitude: CLLocationDistance
    /// The radius of uncertainty of `coordinate` in metres; negative when the coordinate is invalid.
    public let horizontalAccuracy: CLLocationAccuracy
    /// The uncertainty of `altitude` in metres; negative when the altitude is invalid.
    public let verticalAccuracy: CLLocationAccuracy
    /// Degrees clockwise from true north; negative when unknown.
    public let course: CLLocationDirection
    /// The course's uncertainty in degrees; negative when unknown.
    public let courseAccuracy: CLLocationDirectionAccuracy
    /// Metres per second; negative when unknown.
    public let speed: CLLocationSpeed
    /// The speed's uncertainty in metres per second; negative when unknown.
    public let speedAccuracy: CLLocationSpeedAccuracy
    /// When the position was determined.
    public let timestamp: Date

    /// A location at a coordinate, now, with an altitude of 0, an exact horizontal position and no
    /// altitude accuracy (CoreLocation's defaults).
    public convenience init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.init(
            coordinate: CLLocationCoordinate2D(latitude: latitude, longitude: longitude), altitude: 0,
            horizontalAccuracy: 0, verticalAccuracy: -1, timestamp: Date())
    }

    public convenience init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance, horizontalAccuracy: CLLocationAccuracy,
        verticalAccuracy: CLLocationAccuracy, timestamp: Date
    ) {
        self.init(
            coordinate: coordinate, altitude: altitude, horizontalAccuracy: horizontalAccuracy,
            verticalAccuracy: verticalAccuracy,
            course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1, timestamp: timestamp)
    }

    public convenience init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance, horizontalAccuracy: CLLocationAccuracy,
        verticalAccuracy: CLLocationAccuracy, course: CLLocationDirection, speed: CLLocationSpeed, timestamp: Date
    ) {
        self.init(
            coordinate: coordinate, altitude: altitude, horizontalAccuracy: horizontalAccuracy,
            verticalAccuracy: verticalAccuracy,
            course: course, courseAccuracy: -1, speed: speed, speedAccuracy: -1, timestamp: timestamp)
    }

    public init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance, horizontalAccuracy: CLLocationAccuracy,
        verticalAccuracy: CLLocationAccuracy, course: CLLocationDirection, courseAccuracy: CLLocationDirectionAccuracy,
        speed: CLLocationSpeed, speedAccuracy: CLLocationSpeedAccuracy, timestamp: Date
    ) {
        self.coordinate = coordinate
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.course = course
        self.courseAccuracy = courseAccuracy
        self.speed = speed
        self.speedAccuracy = speedAccuracy
        self.timestamp = timestamp
    }

    /// The distance in metres to another location along the Earth's surface (a great circle on a
    /// sphere of the mean Earth radius — the measure region triggers use), ignoring altitude.
    open func distance(from location: CLLocation) -> CLLocationDistance {
        coordinate.coordinate.distance(to: location.coordinate.coordinate)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CLLocation else { return false }
        return coordinate == other.coordinate && altitude == other.altitude
            && horizontalAccuracy == other.horizontalAccuracy
            && verticalAccuracy == other.verticalAccuracy && course == other.course && speed == other.speed
            && timestamp == other.timestamp
    }

    open override var hash: Int { coordinate.hashValue ^ timestamp.hashValue }

    /// As CoreLocation writes it: `<+52.52000000,+13.40500000> +/- 0.00m (speed -1.00 mps / course -1.00) @ …`.
    open override var description: String {
        let position = String(
            format: "<%+.8f,%+.8f> +/- %.2fm", coordinate.latitude, coordinate.longitude, horizontalAccuracy)
        return position + String(format: " (speed %.2f mps / course %.2f) @ ", speed, course) + "\(timestamp)"
    }
}

/// The accuracy of a location, in metres.
public typealias CLLocationAccuracy = Double
/// A direction in degrees clockwise from true north.
public typealias CLLocationDirection = Double
/// The accuracy of a direction, in degrees.
public typealias CLLocationDirectionAccuracy = Double
/// A speed in metres per second.
public typealias CLLocationSpeed = Double
/// The accuracy of a speed, in metres per second.
public typealias CLLocationSpeedAccuracy = Double

/// A geographic region.
open class CLRegion: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable` (an open class): the flags are behind a `Mutex`; the identifier is immutable.
    public let identifier: String
    private let flags = Mutex((entry: true, exit: true))

    init(identifier: String) { self.identifier = identifier }

    /// Whether entering the region fires its triggers (default `true`).
    public var notifyOnEntry: Bool {
        get { flags.withLock { $0.entry } }
        set { flags.withLock { $0.entry = newValue } }
    }
    /// Whether leaving the region fires its triggers (default `true`).
    public var notifyOnExit: Bool {
        get { flags.withLock { $0.exit } }
        set { flags.withLock { $0.exit = newValue } }
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
        CircularRegion(
            identifier: identifier, center: center.coordinate, radius: radius,
            notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit)
    }

    convenience init(value: CircularRegion) {
        self.init(
            center: CLLocationCoordinate2D(latitude: value.center.latitude, longitude: value.center.longitude),
            radius: value.radius, identifier: value.identifier)
        notifyOnEntry = value.notifyOnEntry
        notifyOnExit = value.notifyOnExit
    }
}
