import Chime

/// Reminders at saved places, as location apps write them: places are kept as `CLLocation`s, a
/// region is made from a place's coordinate, and the distance decides what counts as "nearby".
public class PlaceReminders {
    public struct Place {
        public var name: String
        public var location: CLLocation
        public init(name: String, latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
            self.name = name
            self.location = CLLocation(latitude: latitude, longitude: longitude)
        }
    }

    public let radius: CLLocationDistance = 150
    public private(set) var places: [Place] = []

    public init() {}

    public func remind(at place: Place, message: String) {
        places.append(place)
        let region = CLCircularRegion(center: place.location.coordinate, radius: radius, identifier: place.name)
        region.notifyOnEntry = true
        region.notifyOnExit = false
        let content = UNMutableNotificationContent()
        content.title = place.name
        content.body = message
        content.sound = .default
        let trigger = UNLocationNotificationTrigger(region: region, repeats: false)
        UNUserNotificationCenter.current().add(
            UNNotificationRequest(identifier: "place-\(place.name)", content: content, trigger: trigger))
    }

    /// The saved places within `distance` metres of a position, nearest first.
    public func places(near coordinate: CLLocationCoordinate2D, within distance: CLLocationDistance) -> [String] {
        let here = CLLocation(latitude: coordinate.latitude, longitude: coordinate.longitude)
        return places.filter { $0.location.distance(from: here) <= distance }
            .sorted { $0.location.distance(from: here) < $1.location.distance(from: here) }.map(\.name)
    }

    /// A coordinate as older code makes it.
    public static func coordinate(_ latitude: Double, _ longitude: Double) -> CLLocationCoordinate2D {
        CLLocationCoordinate2DMake(latitude, longitude)
    }
}
