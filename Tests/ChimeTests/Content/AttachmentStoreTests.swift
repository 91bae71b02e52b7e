import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// `add` moves attachment files into the app's attachment store, as iOS moves them into its own.
@Suite("The attachment store", .testThreads)
struct AttachmentStoreTests {
    /// A file in a fresh temporary directory, as apps write one before attaching it.
    static func temporaryFile(_ name: String, bytes: Data = Data(repeating: 0x42, count: 64)) throws -> URL {
        let url = scratchDirectory("chime-store").appendingPathComponent(name)
        try bytes.write(to: url)
        return url
    }

    static func content(_ title: String, attachments: [UNNotificationAttachment]) -> UNMutableNotificationContent {
        let content = UNMutableNotificationContent()
        content.title = title
        content.attachments = attachments
        return content
    }

    @Test("a simulator's temporary store goes with it, and the temporary directory made to hold it too")
    func temporaryStoreLeavesNothing() throws {
        var store: AttachmentStore? = .temporary(app: "com.example.app")
        let directory = try #require(store).directory
        let root = directory.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("a photo".utf8).write(to: directory.appendingPathComponent("photo.jpg"))
        store = nil
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        #expect(!FileManager.default.fileExists(atPath: root.path), "the temporary directory made for it")
    }

    @Test(
        "add moves the file in: the app's file is gone, url points into the store, the file leaves with the notification"
    )
    func movedAndRemoved() async throws {
        let simulator = try await authorizedSimulator()
        let bytes = Data("a photo".utf8)
        let file = try Self.temporaryFile("photo.jpg", bytes: bytes)
        let attachment = try UNNotificationAttachment(identifier: "photo", url: file)
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "p", content: Self.content("Photo", attachments: [attachment]),
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        #expect(!FileManager.default.fileExists(atPath: file.path), "moved, as on iOS")
        let stored = try #require(await simulator.pendingRequests.first?.content.attachments.first)
        #expect(stored.url != file && stored.url.lastPathComponent == "photo.jpg" && stored.identifier == "photo")
        #expect(try Data(contentsOf: stored.url) == bytes)
        await simulator.advance(by: 5)
        let delivered = try #require(await simulator.deliveredNotifications.first?.request.content.attachments.first)
        #expect(delivered.url == stored.url && FileManager.default.fileExists(atPath: delivered.url.path))
        simulator.center.removeDeliveredNotifications(withIdentifiers: ["p"])
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: stored.url.path), "removed with the notification")
    }

    @Test("a replaced or removed pending request's file goes; one still referred to stays")
    func replacedAndRemovedPending() async throws {
        let simulator = try await authorizedSimulator()
        let first = try UNNotificationAttachment(identifier: "a", url: try Self.temporaryFile("a.png"))
        let second = try UNNotificationAttachment(identifier: "b", url: try Self.temporaryFile("b.png"))
        let other = try UNNotificationAttachment(identifier: "c", url: try Self.temporaryFile("c.png"))
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)
        try await simulator.center.add(
            UNNotificationRequest(identifier: "x", content: Self.content("x", attachments: [first]), trigger: trigger))
        try await simulator.center.add(
            UNNotificationRequest(identifier: "y", content: Self.content("y", attachments: [other]), trigger: trigger))
        let firstStored = try #require(await simulator.pendingRequests.first?.content.attachments.first?.url)
        try await simulator.center.add(
            UNNotificationRequest(identifier: "x", content: Self.content("x", attachments: [second]), trigger: trigger))
        let pending = await simulator.pendingRequests
        #expect(!FileManager.default.fileExists(atPath: firstStored.path), "the replaced request's file")
        let secondStored = try #require(pending.first { $0.identifier == "x" }?.content.attachments.first?.url)
        let otherStored = try #require(pending.first { $0.identifier == "y" }?.content.attachments.first?.url)
        simulator.center.removePendingNotificationRequests(withIdentifiers: ["x"])
        #expect(await simulator.pendingRequests.map(\.identifier) == ["y"])
        #expect(!FileManager.default.fileExists(atPath: secondStored.path))
        #expect(FileManager.default.fileExists(atPath: otherStored.path))
    }

    @Test("a snoozed copy of a tapped notification keeps its file; the file goes when nothing refers to it")
    @MainActor
    func snoozeKeepsTheFile() async throws {
        let simulator = try await authorizedSimulator()
        let delegate = RecordingDelegate()
        delegate.onResponse = { center, response in
            let again = response.notification.request.content.mutableCopy() as! UNMutableNotificationContent
            center.add(
                UNNotificationRequest(
                    identifier: "again", content: again,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        }
        simulator.center.delegate = delegate
        let attachment = try UNNotificationAttachment(identifier: "i", url: try Self.temporaryFile("i.gif"))
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "first", content: Self.content("x", attachments: [attachment]),
                trigger: nil))
        let stored = try #require(await simulator.deliveredNotifications.first?.request.content.attachments.first?.url)
        try await simulator.tap("first")
        #expect(await simulator.pendingRequests.first?.content.attachments.first?.url == stored)
        #expect(FileManager.default.fileExists(atPath: stored.path), "the snoozed request refers to it")
        await simulator.advance(by: 5)
        simulator.center.removeAllDeliveredNotifications()
        _ = await simulator.deliveredNotifications
        #expect(!FileManager.default.fileExists(atPath: stored.path))
    }

    @Test("an add that fails puts the file back where the app had it")
    func failedAddPutsItBack() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.tests")
        simulator.authorizationAnswer = .deny
        _ = try await simulator.center.requestAuthorization(options: [.alert])
        let file = try Self.temporaryFile("photo.png")
        let attachment = try UNNotificationAttachment(identifier: "photo", url: file)
        let error = await #expect(throws: UNError.self) {
            try await simulator.center.add(
                UNNotificationRequest(
                    identifier: "p", content: Self.content("x", attachments: [attachment]),
                    trigger: nil))
        }
        #expect(error?.code == .notificationsNotAllowed)
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    @Test("a file deleted before add fails it with attachmentMoveIntoDataStoreFailed, and nothing is added")
    func deletedBeforeAdd() async throws {
        let simulator = try await authorizedSimulator()
        let file = try Self.temporaryFile("photo.png")
        let attachment = try UNNotificationAttachment(identifier: "photo", url: file)
        try FileManager.default.removeItem(at: file)
        let error = await #expect(throws: UNError.self) {
            try await simulator.center.add(
                UNNotificationRequest(
                    identifier: "p", content: Self.content("x", attachments: [attachment]),
                    trigger: nil))
        }
        #expect(error?.code == .attachmentMoveIntoDataStoreFailed)
        #expect(error?.message.contains("photo") == true)
        #expect(await simulator.deliveredNotifications.isEmpty)
    }

    @Test("with a store file, the attachments sit beside it in attachments/<app>/ and outlive the process")
    func besideTheStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-data-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("com.example.tests.sqlite").path
        var stored: URL?
        do {
            let simulator = try NotificationSimulator(bundleIdentifier: "com.example.tests", storePath: path)
            #expect(try await simulator.center.requestAuthorization(options: [.alert]))
            let attachment = try UNNotificationAttachment(identifier: "a", url: try Self.temporaryFile("a.mp3"))
            try await simulator.center.add(
                UNNotificationRequest(
                    identifier: "a", content: Self.content("a", attachments: [attachment]),
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
            stored = await simulator.pendingRequests.first?.content.attachments.first?.url
        }
        let url = try #require(stored)
        #expect(url.path.hasPrefix(directory.appendingPathComponent("attachments/com.example.tests/").path))
        let reopened = try NotificationSimulator(bundleIdentifier: "com.example.tests", storePath: path)
        #expect(await reopened.pendingRequests.first?.content.attachments.first?.url == url)
        #expect(FileManager.default.fileExists(atPath: url.path))
    }

    @Test("an extension-less temporary file with a public.png hint in [NSObject: AnyObject] options, deleted after add")
    func hintedExtensionlessImage() async throws {
        let simulator = try await authorizedSimulator()
        // As iOS apps write it: the downloaded image's Data to a temporary name, options as NSObject keys.
        let folder = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
            .appendingPathComponent(ProcessInfo.processInfo.globallyUniqueString, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(UUID().uuidString)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 32))
        try png.write(to: file)
        let options: [NSObject: AnyObject] = [
            UNNotificationAttachmentOptionsTypeHintKey as NSString: "public.png" as NSString
        ]
        let attachment = try UNNotificationAttachment(identifier: "image", url: file, options: options)
        #expect(attachment.type == "public.png")
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "img", content: Self.content("Image", attachments: [attachment]),
                trigger: nil))
        try? FileManager.default.removeItem(at: folder)  // the app cleans up after itself
        let delivered = try #require(await simulator.deliveredNotifications.first?.request.content.attachments.first)
        #expect(delivered.type == "public.png" && delivered.identifier == "image")
        #expect(try Data(contentsOf: delivered.url) == png)
    }
}
