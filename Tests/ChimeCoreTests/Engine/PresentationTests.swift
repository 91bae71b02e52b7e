import ChimeCore
import Foundation
import TestThreads
import Testing

/// The presentation rules shared by every surface.
@Suite("Presentation rules", .testThreads)
struct PresentationTests {
    static func settings(_ options: UNAuthorizationOptions, decision: AuthorizationDecision = .grant)
        -> NotificationSettings
    {
        Presentation.settings(after: decision, options: options, previous: NotificationSettings())
    }

    static func content(sound: Bool = false, badge: Int? = nil, level: UNNotificationInterruptionLevel = .active)
        -> NotificationContent
    {
        var content = NotificationContent(title: "t")
        content.sound = sound ? .default : nil
        content.badge = badge
        content.interruptionLevel = level
        return content
    }

    @Test(
        "in the background a notification is shown as its content says, within what the user allowed",
        arguments: [
            (content(), [.alert, .sound, .badge], [.list, .banner]),
            (content(sound: true), [.alert, .sound, .badge], [.list, .banner, .sound]),
            (content(sound: true, badge: 2), [.alert, .sound, .badge], [.list, .banner, .sound, .badge]),
            (content(sound: true, badge: 2), [.alert], [.list, .banner]),
            (content(sound: true, badge: 2), [], [.list]),
            (content(sound: true, level: .passive), [.alert, .sound], [.list]),
            (content(sound: true, level: .timeSensitive), [.alert, .sound], [.list, .banner, .sound]),
            (content(sound: true), [.provisional, .alert, .sound], [.list]),
        ] as [(NotificationContent, UNAuthorizationOptions, UNNotificationPresentationOptions)])
    func background(
        content: NotificationContent, options: UNAuthorizationOptions, expected: UNNotificationPresentationOptions
    ) {
        #expect(Presentation.background(for: content, settings: Self.settings(options)) == expected)
    }

    @Test("a denied app shows nothing, in front or not")
    func denied() {
        let settings = Self.settings([.alert, .sound], decision: .deny)
        #expect(settings.authorizationStatus == .denied)
        #expect(Presentation.background(for: Self.content(sound: true), settings: settings) == [])
        #expect(Presentation.foreground(requested: [.banner, .sound, .list], settings: settings) == [])
    }

    @Test(
        "in front, willPresent's options are limited to what the user allowed",
        arguments: [
            ([.banner, .list, .sound, .badge], [.alert, .sound, .badge], [.banner, .list, .sound, .badge]),
            ([.banner, .list, .sound, .badge], [.alert], [.banner, .list]),
            ([.banner, .sound], [.sound], [.sound]),
            ([.list], [.alert, .sound, .badge], [.list]),
            ([], [.alert, .sound, .badge], []),
            ([UNNotificationPresentationOptions(rawValue: 4)], [.alert], [.banner, .list]),
        ] as [(UNNotificationPresentationOptions, UNAuthorizationOptions, UNNotificationPresentationOptions)])
    func foreground(
        requested: UNNotificationPresentationOptions, options: UNAuthorizationOptions,
        expected: UNNotificationPresentationOptions
    ) {
        #expect(Presentation.foreground(requested: requested, settings: Self.settings(options)) == expected)
    }

    @Test("granting sets each setting from the options asked for")
    func grantedSettings() {
        let settings = Self.settings([.alert, .badge, .criticalAlert, .providesAppNotificationSettings])
        #expect(settings.authorizationStatus == .authorized)
        #expect(
            settings.alertSetting == .enabled && settings.badgeSetting == .enabled && settings.soundSetting == .disabled
        )
        #expect(settings.criticalAlertSetting == .enabled && settings.timeSensitiveSetting == .enabled)
        #expect(Self.settings([.provisional]).timeSensitiveSetting == .disabled)
        #expect(settings.providesAppNotificationSettings)
        #expect(settings.alertStyle == .banner)
        #expect(Self.settings([.provisional]).authorizationStatus == .provisional)
    }
}
