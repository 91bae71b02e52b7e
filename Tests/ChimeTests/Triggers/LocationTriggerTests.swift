import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

@Suite("Location triggers", .testThreads)
struct LocationTriggerTests {
    static let berlin = CLLocationCoordinate2D(latitude: 52.5200, longitude: 13.4050)
    /// About 55 m north of `berlin`.
    static let nearBerlin = CLLocationCoordinate2D(latitude: 52.5205, longitude: 13.4050)
    /// About 1.1 km north of `berlin`.
    static let outsideBerlin = CLLocationCoordinate2D(latitude: 52.5300, longitude: 13.4050)
    static let paris = CLLocationCoordinate2D(latitude: 48.8566, longitude: 2.3522)

    static func region(entry: Bool, exit: Bool, identifier: String = "office") -> CLCircularRegion {
        let region = CLCircularRegion(center: berlin, radius: 100, identifier: identifier)
        region.notifyOnEntry = entry
        region.notifyOnExit = exit
        return region
    }

    @Test(
        "CLCircularRegion.contains: inside, on the edge side, outside",
        arguments: [
            (berlin, true), (nearBerlin, true), (outsideBerlin, false), (paris, false),
        ])
    func contains(point: CLLocationCoordinate2D, inside: Bool) {
        #expect(Self.region(entry: true, exit: true).contains(point) == inside)
    }

    @Test("a region notifies on entry and exit by default and keeps its fields")
    func regionDefaults() {
        let region = CLCircularRegion(center: Self.berlin, radius: 250, identifier: "home")
        #expect(region.notifyOnEntry && region.notifyOnExit)
        #expect(region.identifier == "home" && region.radius == 250 && region.center == Self.berlin)
        let trigger = UNLocationNotificationTrigger(region: region, repeats: true)
        #expect(trigger.repeats && trigger.region.identifier == "home")
    }

    func add(_ simulator: NotificationSimulator, _ identifier: String, entry: Bool, exit: Bool, repeats: Bool)
        async throws
    {
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: identifier, content: content(identifier),
                trigger: UNLocationNotificationTrigger(
                    region: Self.region(entry: entry, exit: exit, identifier: identifier), repeats: repeats)))
    }

    func deliveredIdentifiers(_ simulator: NotificationSimulator) async -> Set<String> {
        Set(await simulator.deliveredNotifications.map(\.request.identifier))
    }

    @Test("entering fires notifyOnEntry triggers, leaving fires notifyOnExit triggers")
    func entryAndExit() async throws {
        let simulator = try await authorizedSimulator()
        try await add(simulator, "enter", entry: true, exit: false, repeats: true)
        try await add(simulator, "leave", entry: false, exit: true, repeats: true)
        await simulator.move(to: Self.paris)
        #expect(await deliveredIdentifiers(simulator).isEmpty)
        await simulator.move(to: Self.nearBerlin)
        #expect(await deliveredIdentifiers(simulator) == ["enter"])
        await simulator.move(to: Self.berlin)
        #expect(await simulator.presented.count == 1, "moving inside the region fires nothing")
        await simulator.move(to: Self.outsideBerlin)
        #expect(await deliveredIdentifiers(simulator) == ["enter", "leave"])
        #expect(await simulator.presented.map(\.notification.request.identifier) == ["enter", "leave"])
    }

    @Test("a non-repeating trigger fires once; a repeating one re-arms", arguments: [false, true])
    func repeatsRearm(repeats: Bool) async throws {
        let simulator = try await authorizedSimulator()
        try await add(simulator, "r", entry: true, exit: false, repeats: repeats)
        await simulator.move(to: Self.paris)
        for _ in 0..<3 {
            await simulator.move(to: Self.berlin)
            await simulator.move(to: Self.paris)
        }
        #expect(await simulator.presented.count == (repeats ? 3 : 1))
        #expect(await simulator.pendingRequests.map(\.identifier) == (repeats ? ["r"] : []))
    }

    @Test("a pending location trigger reads back with its region")
    func readBack() async throws {
        let simulator = try await authorizedSimulator()
        try await add(simulator, "office", entry: true, exit: false, repeats: false)
        let trigger = try #require(await simulator.pendingRequests.first?.trigger as? UNLocationNotificationTrigger)
        let region = try #require(trigger.region as? CLCircularRegion)
        #expect(region.identifier == "office" && region.radius == 100 && region.center == Self.berlin)
        #expect(region.notifyOnEntry && !region.notifyOnExit)
    }
}
