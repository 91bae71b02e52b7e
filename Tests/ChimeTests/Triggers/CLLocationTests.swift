import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

@Suite("CoreLocation's types for location triggers", .testThreads)
struct CLLocationTests {
    @Test("CLLocation(latitude:longitude:) has CoreLocation's defaults")
    func defaults() {
        let before = Date()
        let location = CLLocation(latitude: 52.52, longitude: 13.405)
        #expect(location.coordinate == CLLocationCoordinate2D(latitude: 52.52, longitude: 13.405))
        #expect(location.altitude == 0)
        #expect(location.horizontalAccuracy == 0)
        #expect(location.verticalAccuracy == -1)
        #expect(
            location.speed == -1 && location.course == -1 && location.speedAccuracy == -1
                && location.courseAccuracy == -1)
        #expect(location.timestamp >= before && location.timestamp <= Date())
        #expect(
            location.description.hasPrefix("<+52.52000000,+13.40500000> +/- 0.00m (speed -1.00 mps / course -1.00) @ "))
    }

    @Test(
        "distance(from:) follows the Earth's curvature and is symmetric",
        arguments: [
            // Berlin TV tower to the Brandenburg Gate; Paris to London; the same place; antipodes.
            (52.5208, 13.4094, 52.5163, 13.3777, 2_200.0, 0.02),
            (48.8566, 2.3522, 51.5074, -0.1278, 343_500.0, 0.01),
            (10.0, 20.0, 10.0, 20.0, 0.0, 0.0),
            (0.0, 0.0, 0.0, 180.0, 20_015_087.0, 0.001),
        ])
    func distance(lat1: Double, lon1: Double, lat2: Double, lon2: Double, metres: Double, tolerance: Double) {
        let a = CLLocation(latitude: lat1, longitude: lon1)
        let b = CLLocation(latitude: lat2, longitude: lon2)
        let measured = a.distance(from: b)
        #expect(abs(measured - metres) <= max(1, metres * tolerance), "\(measured)")
        #expect(measured == b.distance(from: a))
    }

    @Test("CLLocationCoordinate2DMake, the invalid coordinate and the types' names")
    func functions() {
        let coordinate: CLLocationCoordinate2D = CLLocationCoordinate2DMake(48.85, 2.35)
        #expect(coordinate.latitude == 48.85 && coordinate.longitude == 2.35)
        #expect(CLLocationCoordinate2DIsValid(coordinate))
        #expect(!CLLocationCoordinate2DIsValid(kCLLocationCoordinate2DInvalid))
        let degrees: CLLocationDegrees = coordinate.latitude
        let metres: CLLocationDistance = 100
        #expect(degrees < CLLocationDistanceMax && metres < CLLocationDistanceMax)
    }

    @Test("a region made from a CLLocation's coordinate fires when the device arrives")
    func regionFromLocation() async throws {
        let simulator = try await authorizedSimulator()
        let office = CLLocation(latitude: 52.5200, longitude: 13.4050)
        let region = CLCircularRegion(center: office.coordinate, radius: 150, identifier: "office")
        region.notifyOnExit = false
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "office", content: content("At the office"),
                trigger: UNLocationNotificationTrigger(region: region, repeats: false)))
        let nearby = CLLocation(latitude: 52.5205, longitude: 13.4055)
        #expect(nearby.distance(from: office) < region.radius)
        #expect(region.contains(nearby.coordinate))
        await simulator.move(to: nearby.coordinate)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["office"])
    }
}
