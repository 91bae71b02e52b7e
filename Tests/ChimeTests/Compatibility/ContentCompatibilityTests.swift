import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Content, actions, categories and sounds behave as Apple's classes do.
@Suite("Apple-compatible content, actions, categories and sounds", .testThreads)
struct ContentCompatibilityTests {
    /// Content with every field set to something other than its default.
    static func fullContent() -> UNMutableNotificationContent {
        let content = UNMutableNotificationContent()
        content.title = "Title"
        content.subtitle = "Subtitle"
        content.body = "Body"
        content.badge = 7
        content.sound = UNNotificationSound(named: UNNotificationSoundName("ping.caf"))
        content.launchImageName = "Launch"
        content.userInfo = ["task": "t-1", "count": 3]
        content.categoryIdentifier = "alarm.category"
        content.threadIdentifier = "thread-1"
        content.targetContentIdentifier = "target"
        content.summaryArgument = "Ann"
        content.summaryArgumentCount = 2
        content.interruptionLevel = .timeSensitive
        content.relevanceScore = 0.5
        content.filterCriteria = "work"
        return content
    }

    static func expectFull(_ content: UNNotificationContent) {
        #expect(content.title == "Title")
        #expect(content.subtitle == "Subtitle")
        #expect(content.body == "Body")
        #expect(content.badge == 7)
        #expect(content.sound == UNNotificationSound(named: UNNotificationSoundName("ping.caf")))
        #expect(content.launchImageName == "Launch")
        #expect(content.userInfo["task"] as? String == "t-1")
        #expect(content.userInfo["count"] as? Int == 3)
        #expect(content.categoryIdentifier == "alarm.category")
        #expect(content.threadIdentifier == "thread-1")
        #expect(content.targetContentIdentifier == "target")
        #expect(content.summaryArgument == "Ann")
        #expect(content.summaryArgumentCount == 2)
        #expect(content.interruptionLevel == .timeSensitive)
        #expect(content.relevanceScore == 0.5)
        #expect(content.filterCriteria == "work")
    }

    @Test("`mutableCopy() as! UNMutableNotificationContent` keeps every field and is independent of the original")
    func mutableCopyKeepsFields() throws {
        let original = Self.fullContent()
        let copy = try #require(original.mutableCopy() as? UNMutableNotificationContent)
        Self.expectFull(copy)
        copy.title = "Changed"
        copy.badge = nil
        copy.userInfo = [:]
        copy.threadIdentifier = "other"
        Self.expectFull(original)
        original.body = "Changed too"
        #expect(copy.body == "Body")
    }

    @Test("`mutableCopy()` of delivered (immutable) content gives editable content with the same fields")
    func mutableCopyOfDelivered() async throws {
        let simulator = try await authorizedSimulator()
        try await simulator.center.add(
            UNNotificationRequest(identifier: "full", content: Self.fullContent(), trigger: nil))
        let delivered = try #require(await simulator.deliveredNotifications.first)
        #expect(!(delivered.request.content is UNMutableNotificationContent))
        let editable = delivered.request.content.mutableCopy() as! UNMutableNotificationContent
        Self.expectFull(editable)
        editable.body = "Snooze 5 Seconds"
        #expect(editable.body == "Snooze 5 Seconds")
        #expect(delivered.request.content.body == "Body")
    }

    @Test("`copy()` of mutable content gives immutable content that later edits do not change")
    func copyIsImmutable() throws {
        let original = Self.fullContent()
        let frozen = try #require(original.copy() as? UNNotificationContent)
        #expect(!(frozen is UNMutableNotificationContent))
        original.title = "Edited after the copy"
        Self.expectFull(frozen)
    }

    @Test("a request keeps its content as it was when the request was made")
    func requestCopiesContent() {
        let content = Self.fullContent()
        let request = UNNotificationRequest(identifier: "r", content: content, trigger: nil)
        content.title = "Edited after the request"
        #expect(request.content.title == "Title")
        #expect(!(request.content is UNMutableNotificationContent))
    }

    @Test("new content has Apple's defaults")
    func contentDefaults() {
        let content = UNMutableNotificationContent()
        #expect(content.title == "" && content.subtitle == "" && content.body == "")
        #expect(content.badge == nil && content.sound == nil)
        #expect(content.userInfo.isEmpty && content.attachments.isEmpty)
        #expect(content.categoryIdentifier == "" && content.threadIdentifier == "")
        #expect(content.targetContentIdentifier == nil && content.filterCriteria == nil)
        #expect(content.interruptionLevel == .active)
        #expect(content.relevanceScore == 0)
    }

    @Test("the three UNNotificationCategory initialisers set every field")
    func categoryInitialisers() {
        let snooze = UNNotificationAction(identifier: "snooze", title: "Snooze")
        let basic = UNNotificationCategory(
            identifier: "a", actions: [snooze], intentIdentifiers: ["INSendMessageIntent"],
            options: [.customDismissAction])
        #expect(basic.identifier == "a")
        #expect(basic.actions.map(\.identifier) == ["snooze"])
        #expect(basic.intentIdentifiers == ["INSendMessageIntent"])
        #expect(basic.options == [.customDismissAction])
        #expect(basic.hiddenPreviewsBodyPlaceholder == "")
        #expect(basic.categorySummaryFormat == "")

        let placeholder = UNNotificationCategory(
            identifier: "b", actions: [], intentIdentifiers: [],
            hiddenPreviewsBodyPlaceholder: "Hidden", options: [.hiddenPreviewsShowTitle])
        #expect(placeholder.hiddenPreviewsBodyPlaceholder == "Hidden")
        #expect(placeholder.options == [.hiddenPreviewsShowTitle])
        #expect(placeholder.categorySummaryFormat == "")

        let summary = UNNotificationCategory(
            identifier: "c", actions: [snooze], intentIdentifiers: [],
            hiddenPreviewsBodyPlaceholder: "%u new", categorySummaryFormat: "%u more from %@",
            options: [.allowInCarPlay])
        #expect(summary.hiddenPreviewsBodyPlaceholder == "%u new")
        #expect(summary.categorySummaryFormat == "%u more from %@")
        #expect(summary.options == [.allowInCarPlay])

        let nils = UNNotificationCategory(
            identifier: "d", actions: [], intentIdentifiers: [],
            hiddenPreviewsBodyPlaceholder: nil, categorySummaryFormat: nil)
        #expect(nils.hiddenPreviewsBodyPlaceholder == "" && nils.categorySummaryFormat == "")
        #expect(nils.options == [])
    }

    @Test("UNTextInputNotificationAction keeps its fields, also when read back from a category")
    func textInputAction() throws {
        let comment = UNTextInputNotificationAction(
            identifier: "comment", title: "Add Comment", options: [.foreground],
            textInputButtonTitle: "Add", textInputPlaceholder: "Add Comment Here")
        #expect(comment.identifier == "comment")
        #expect(comment.title == "Add Comment")
        #expect(comment.options == [.foreground])
        #expect(comment.textInputButtonTitle == "Add")
        #expect(comment.textInputPlaceholder == "Add Comment Here")
        let category = UNNotificationCategory(
            identifier: "c", actions: [UNNotificationAction(identifier: "a", title: "A"), comment],
            intentIdentifiers: [])
        #expect(!(category.actions[0] is UNTextInputNotificationAction))
        let readBack = try #require(category.actions[1] as? UNTextInputNotificationAction)
        #expect(readBack.textInputButtonTitle == "Add")
        #expect(readBack.textInputPlaceholder == "Add Comment Here")
    }

    @Test("actions keep their options and icons")
    func actionOptionsAndIcons() {
        let delete = UNNotificationAction(
            identifier: "delete", title: "Delete", options: [.destructive, .authenticationRequired],
            icon: UNNotificationActionIcon(systemImageName: "trash"))
        #expect(delete.options == [.destructive, .authenticationRequired])
        #expect(delete.icon != nil)
        let plain = UNNotificationAction(identifier: "ok", title: "OK")
        #expect(plain.options == [])
        #expect(plain.icon == nil)
        #expect(UNNotificationAction(identifier: "ok", title: "OK") == plain)
        #expect(UNNotificationAction(identifier: "ok", title: "OK", options: [.foreground]) != plain)
    }

    @Test("the sound variants are distinct and keep name, criticality and volume")
    func soundVariants() {
        let sounds: [UNNotificationSound] = [
            .default, .defaultCritical, UNNotificationSound(named: UNNotificationSoundName("ping.caf")),
            .criticalSoundNamed(UNNotificationSoundName("siren.caf")),
            .criticalSoundNamed(UNNotificationSoundName("siren.caf"), withAudioVolume: 0.8),
            .defaultCriticalSound(withAudioVolume: 0.3),
        ]
        for (i, a) in sounds.enumerated() {
            for (j, b) in sounds.enumerated() {
                #expect((a == b) == (i == j), "sound \(i) vs \(j)")
            }
        }
        #expect(UNNotificationSound.default == UNNotificationSound.default)
        #expect(UNNotificationSound.default() == UNNotificationSound.default)
        #expect(UNNotificationSoundName(rawValue: "x.caf") == UNNotificationSoundName("x.caf"))
    }

    @Test(
        "every sound variant survives add → pending → delivered",
        arguments: [
            UNNotificationSound.default, .defaultCritical,
            UNNotificationSound(named: UNNotificationSoundName("ping.caf")),
            .criticalSoundNamed(UNNotificationSoundName("siren.caf")),
            .criticalSoundNamed(UNNotificationSoundName("siren.caf"), withAudioVolume: 0.75),
            .defaultCriticalSound(withAudioVolume: 0.25),
        ])
    func soundRoundTrip(sound: UNNotificationSound) async throws {
        let simulator = try await authorizedSimulator()
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "s", content: content("S", sound: sound),
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        #expect(await simulator.pendingRequests.first?.content.sound == sound)
        await simulator.advance(by: 5)
        #expect(await simulator.deliveredNotifications.first?.request.content.sound == sound)
    }

    @Test("a critical sound volume outside 0...1 is refused naming the field")
    func soundVolumeOutOfRange() async throws {
        let simulator = try await authorizedSimulator()
        let loud = content("Loud", sound: .defaultCriticalSound(withAudioVolume: 1.5))
        let error = await #expect(throws: ChimeError.self) {
            try await simulator.center.add(UNNotificationRequest(identifier: "loud", content: loud, trigger: nil))
        }
        #expect(error?.field == "content.sound.volume")
        #expect(await simulator.deliveredNotifications.isEmpty)
    }

    @Test("Apple's default arguments compile and behave: options, completion handlers, request authorization")
    @MainActor
    func defaultArguments() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.defaults")
        let center = simulator.center
        // requestAuthorization(options:) with its default options and the completion-handler form.
        let granted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            center.requestAuthorization { granted, error in continuation.resume(returning: granted && error == nil) }
        }
        #expect(granted)
        #expect(try await center.requestAuthorization())
        #expect(try await center.requestAuthorization(options: [.alert]))
        // Actions and categories without options.
        let action = UNNotificationAction(identifier: "ok", title: "OK")
        let reply = UNTextInputNotificationAction(
            identifier: "reply", title: "Reply", options: [],
            textInputButtonTitle: "Send", textInputPlaceholder: "")
        let category = UNNotificationCategory(identifier: "c", actions: [action, reply], intentIdentifiers: [])
        center.setNotificationCategories([category])
        // add without a completion handler, setBadgeCount without one.
        Self.fireAndForget(
            center, UNNotificationRequest(identifier: "now", content: content("Now", category: "c"), trigger: nil))
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["now"])
        #expect(await center.notificationCategories() == [category])
        #expect(center.supportsContentExtensions == false)
    }

    /// Calls the completion-handler forms without handlers, as synchronous app code does.
    nonisolated static func fireAndForget(_ center: UNUserNotificationCenter, _ request: UNNotificationRequest) {
        center.add(request)
        center.setBadgeCount(1)
    }
}
