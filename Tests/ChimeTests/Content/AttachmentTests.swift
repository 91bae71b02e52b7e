import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// A file of `size` bytes in a fresh temporary directory, named `name`.
private func temporaryFile(_ name: String, size: Int = 64) throws -> URL {
    let url = scratchDirectory("chime-attach").appendingPathComponent(name)
    try Data(repeating: 0x42, count: size).write(to: url)
    return url
}

@Suite("Attachments and their options", .testThreads)
struct AttachmentTests {
    @Test("the type comes from the extension; an unknown one without a hint is refused, saying how to fix it")
    func typeFromExtension() throws {
        let png = try UNNotificationAttachment(identifier: "p", url: try temporaryFile("photo.PNG"))
        #expect(png.type == "public.png")
        let error = #expect(throws: UNError.self) {
            try UNNotificationAttachment(identifier: "x", url: try temporaryFile("download"))
        }
        #expect(error?.code == .attachmentUnrecognizedType)
        #expect(
            error?.message.contains("UNNotificationAttachmentOptionsTypeHintKey") == true, "\(error?.message ?? "")")
    }

    @Test(
        "a type hint makes a file without an extension acceptable, with the hint as its type and the hint's size limit")
    func typeHint() throws {
        let file = try temporaryFile("CFNetworkDownload_x7Yz.tmp")
        let image = try UNNotificationAttachment(
            identifier: "image", url: file, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.jpeg"])
        #expect(image.type == "public.jpeg")
        let bare = try temporaryFile("bare")
        #expect(
            try UNNotificationAttachment(
                identifier: "a", url: bare, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.mp3"]
            ).type
                == "public.mp3")
        let big = try temporaryFile("clip", size: 6_000_000)
        let tooLarge = #expect(throws: UNError.self) {
            try UNNotificationAttachment(
                identifier: "a", url: big, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.mp3"])
        }
        #expect(tooLarge?.code == .attachmentInvalidFileSize, "audio is limited to 5 MB")
        #expect(
            try UNNotificationAttachment(
                identifier: "v", url: big, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.mpeg-4"]
            ).type
                == "public.mpeg-4")
        let unknown = #expect(throws: UNError.self) {
            try UNNotificationAttachment(
                identifier: "a", url: bare, options: [UNNotificationAttachmentOptionsTypeHintKey: "com.example.nope"])
        }
        #expect(unknown?.code == .attachmentUnrecognizedType)
        #expect(unknown?.message.contains("com.example.nope") == true)
    }

    @Test("thumbnail options are kept, survive add, pending and delivery, and come back")
    func thumbnailOptions() async throws {
        let simulator = try await authorizedSimulator()
        let clip = CGRect(x: 0.25, y: 0, width: 0.5, height: 1)
        let image = try UNNotificationAttachment(
            identifier: "image", url: try temporaryFile("photo.jpg"),
            options: [
                UNNotificationAttachmentOptionsThumbnailClippingRectKey: clip.dictionaryRepresentation,
                UNNotificationAttachmentOptionsThumbnailHiddenKey: false,
            ])
        let video = try UNNotificationAttachment(
            identifier: "video", url: try temporaryFile("movie.mov"),
            options: [
                UNNotificationAttachmentOptionsThumbnailHiddenKey: NSNumber(value: true),
                UNNotificationAttachmentOptionsThumbnailTimeKey: ["value": 150, "timescale": 60] as [String: Any],
            ])
        let rectDirect = try UNNotificationAttachment(
            identifier: "r", url: try temporaryFile("r.gif"),
            options: [
                UNNotificationAttachmentOptionsThumbnailClippingRectKey: clip,
                UNNotificationAttachmentOptionsThumbnailTimeKey: 1.5,
            ])
        #expect(image.thumbnailClippingRect == clip && !image.thumbnailHidden && image.thumbnailTime == nil)
        #expect(video.thumbnailHidden && video.thumbnailTime == 2.5)
        #expect(rectDirect.thumbnailClippingRect == clip && rectDirect.thumbnailTime == 1.5)

        let content = UNMutableNotificationContent()
        content.title = "Photos"
        content.attachments = [image, video]
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "pics", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        let pending = try #require(await simulator.pendingRequests.first).content.attachments
        #expect(pending.map(\.thumbnailClippingRect) == [clip, nil])
        await simulator.advance(by: 5)
        let delivered = try #require(await simulator.deliveredNotifications.first).request.content.attachments
        #expect(delivered.map(\.identifier) == ["image", "video"])
        #expect(delivered.map(\.thumbnailHidden) == [false, true])
        #expect(delivered.map(\.thumbnailTime) == [nil, 2.5])
        #expect(delivered.first?.thumbnailClippingRect == clip)
    }

    @Test(
        "thumbnail options of the wrong type or outside the unit square are refused naming the option", arguments: 0..<5
    )
    func badOptions(index: Int) throws {
        let (key, value): (String, Any) = [
            (UNNotificationAttachmentOptionsThumbnailHiddenKey, "yes"),
            (UNNotificationAttachmentOptionsThumbnailClippingRectKey, CGRect(x: 0.5, y: 0, width: 0.75, height: 1)),
            (UNNotificationAttachmentOptionsThumbnailClippingRectKey, ["X": 0] as [String: Any]),
            (UNNotificationAttachmentOptionsThumbnailTimeKey, -1.0),
            (UNNotificationAttachmentOptionsThumbnailTimeKey, "soon"),
        ][index]
        let file = try temporaryFile("p.png")
        let error = #expect(throws: ChimeError.self) {
            try UNNotificationAttachment(identifier: "p", url: file, options: [key: value])
        }
        let option = key.replacingOccurrences(of: "UNNotificationAttachmentOptions", with: "").replacingOccurrences(
            of: "Key", with: "")
        let named = (error?.field ?? "") + " " + (error?.message ?? "")
        #expect(named.contains(key) || named.lowercased().contains(option.lowercased()), "\(String(describing: error))")
    }

    @Test("CGRect's dictionary form reads back")
    func rectDictionary() {
        let rect = CGRect(x: 0.1, y: 0.2, width: 0.3, height: 0.4)
        #expect(CGRect(dictionaryRepresentation: rect.dictionaryRepresentation) == rect)
        #expect(CGRect(dictionaryRepresentation: ["X": 1]) == nil)
    }
}
