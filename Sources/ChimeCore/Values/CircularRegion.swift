import Foundation

/// A point on Earth, in degrees.
public struct Coordinate: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether the latitude is in -90...90 and the longitude in -180...180.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// The great-circle distance to another point, in metres (haversine, mean Earth radius).
    public func distance(to other: Coordinate) -> Double {
        let radius = 6_371_008.8
        let phi1 = latitude * .pi / 180
        let phi2 = other.latitude * .pi / 180
        let deltaPhi = (other.latitude - latitude) * .pi / 180
        let deltaLambda = (other.longitude - longitude) * .pi / 180
        let a =
            sin(deltaPhi / 2) * sin(deltaPhi / 2) + cos(phi1) * cos(phi2) * sin(deltaLambda / 2) * sin(deltaLambda / 2)
        return 2 * radius * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}

/// A circle on Earth that a location trigger watches.
public struct CircularRegion: Sendable, Hashable {
    public var identifier: String
    public var center: Coordinate
    /// The radius in metres.
    public var radius: Double
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool

    public init(
        identifier: String, center: Coordinate, radius: Double, notifyOnEntry: Bool = true,
        notifyOnExit: Bool = true
    ) {
        self.identifier = identifier
        self.center = center
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }

    /// Whether the point lies inside the circle (on the edge counts as inside).
    public func contains(_ point: Coordinate) -> Bool {
        center.distance(to: point) <= radius
    }
}
