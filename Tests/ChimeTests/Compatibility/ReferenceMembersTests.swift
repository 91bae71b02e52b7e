import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// A content provider as an app might declare one (on iOS, an intent).
private final class MessageIntentStandIn: UNNotificationContentProviding {}

/// Members of Apple's reference that Chime added for this check (docs/differences-from-apple.md).
@Suite("Apple's reference members", .testThreads)
struct ReferenceMembersTests {
    @Test("updating(from:) throws contentProvidingObjectNotAllowed (1500): no intents on Linux")
    func updatingFrom() throws {
        let content = UNMutableNotificationContent()
        content.title = "Ann"
        let error = #expect(throws: UNError.self) { try content.updating(from: MessageIntentStandIn()) }
        #expect(error?.code == .contentProvidingObjectNotAllowed)
        #expect((error.map { $0 as NSError })?.code == 1500)
        #expect((error.map { $0 as NSError })?.domain == UNErrorDomain)
    }

    @Test("localizedUserNotificationString(forKey:arguments:) formats the key, as iOS does for a missing key")
    func localizedString() {
        #expect(NSString.localizedUserNotificationString(forKey: "Wake up!", arguments: nil) == "Wake up!")
        #expect(
            NSString.localizedUserNotificationString(forKey: "Meet %@ at %@", arguments: ["Ann", 10])
                == "Meet Ann at 10")
        #expect(
            NSString.localizedUserNotificationString(forKey: "%2$@ before %1$@, 100%%", arguments: ["b", "a"])
                == "a before b, 100%")
    }

    @Test("ringtoneSoundNamed keeps the name and survives delivery")
    func ringtone() async throws {
        let simulator = try await authorizedSimulator()
        let content = UNMutableNotificationContent()
        content.title = "Call"
        content.sound = .ringtoneSoundNamed(UNNotificationSoundName("marimba.caf"))
        try await simulator.center.add(UNNotificationRequest(identifier: "call", content: content, trigger: nil))
        #expect(
            await simulator.deliveredNotifications.first?.request.content.sound
                == UNNotificationSound(named: "marimba.caf"))
    }

    @Test("the immutable classes are NSCopying, copying to themselves")
    func copying() async throws {
        let simulator = try await authorizedSimulator()
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: content("N"), trigger: nil))
        let notification = try #require(await simulator.deliveredNotifications.first)
        #expect(notification.copy() as? UNNotification === notification)
        let settings = await simulator.center.notificationSettings()
        #expect(settings.copy() as? UNNotificationSettings === settings)
        let sound = UNNotificationSound.default
        #expect(sound.copy() as? UNNotificationSound === sound)
        let icon = UNNotificationActionIcon(systemImageName: "bell")
        #expect(icon.copy() as? UNNotificationActionIcon === icon)
    }
}
