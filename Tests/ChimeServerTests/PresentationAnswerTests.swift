import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// What the service keeps of an app's `willPresent` answers: nothing for an identifier nobody
/// waits for, a bounded number for deliveries not yet asked, and nothing once the stream is gone.
@Suite("willPresent answers kept by the service", .testThreads)
struct PresentationAnswerTests {
    static let app = "com.example.front"

    /// An engine with the app allowed, and `AppChannels` with `limits`, the app's stream in front.
    static func front(_ limits: AppChannels.AnswerLimits) async throws -> (NotificationEngine, AppChannels, EventStream)
    {
        let engine = NotificationEngine(store: MemoryStore(), policy: FixedAuthorizationPolicy(.grant))
        _ = try await engine.requestAuthorization(app: app, options: [.alert])
        let channels = AppChannels(engine: engine, presentationTimeout: 3600, answerLimits: limits)
        let stream = EventStream()
        channels.connect(app: app, stream: stream, client: nil, serviceExtension: false, foreground: true)
        return (engine, channels, stream)
    }

    @Test("answers for 10,000 identifiers nobody waits for are refused and keep nothing")
    func strayAnswers() async throws {
        let (engine, channels, stream) = try await Self.front(AppChannels.AnswerLimits())
        for index in 0..<10_000 {
            let outcome = channels.reportPresentation(
                app: Self.app, identifier: "stray-\(index)-" + String(repeating: "x", count: 200),
                options: [.banner])
            #expect(outcome == .notAwaited)
        }
        #expect(channels.keptAnswers.count == 0)
        #expect(channels.keptAnswers.bytes == 0)
        stream.detach()
        await engine.shutdown()
    }

    @Test(
        "answers that come before their delivery is asked are kept within the stream's count and bytes, and dropped with it",
        arguments: [
            (AppChannels.AnswerLimits(count: 8, bytes: 1 << 20), 2, 8),
            (AppChannels.AnswerLimits(count: 1000, bytes: 200), 40, 3),
        ])
    func earlyAnswers(limits: AppChannels.AnswerLimits, identifierLength: Int, kept: Int) async throws {
        let (engine, channels, stream) = try await Self.front(limits)
        let identifiers = (0..<30).map { index in
            "\(index)-" + String(repeating: "i", count: max(0, identifierLength - "\(index)-".count))
        }
        _ = try await engine.add(
            identifiers.map { NotificationRequest(identifier: $0, content: NotificationContent(title: "t")) },
            app: Self.app)
        // The presenter asks the first delivery and waits for its answer; the other 29 are expected.
        #expect(try await Self.eventually { channels.keptAnswers.expected == 29 })
        #expect(channels.reportPresentation(app: Self.app, identifier: identifiers[1], options: [.banner]) == .kept)
        // One answer per delivery expected: a second for the same one is not kept.
        #expect(
            channels.reportPresentation(app: Self.app, identifier: identifiers[1], options: [.banner]) == .notAwaited)
        var outcomes: [AppChannels.AnswerOutcome] = []
        for identifier in identifiers[2...] {
            outcomes.append(channels.reportPresentation(app: Self.app, identifier: identifier, options: [.list]))
        }
        #expect(outcomes.filter { $0 == .kept }.count == kept - 1)
        #expect(outcomes.filter { $0 == .full }.count == 28 - (kept - 1))
        #expect(channels.keptAnswers.count == kept)
        #expect(channels.keptAnswers.bytes <= limits.bytes)
        // The waiting delivery's answer lets the presenter go on through the kept ones.
        #expect(channels.reportPresentation(app: Self.app, identifier: identifiers[0], options: [.banner]) == .answered)
        #expect(
            try await Self.eventually { channels.keptAnswers.count == 0 && channels.keptAnswers.expected == 28 - kept })
        #expect(
            channels.reportPresentation(app: Self.app, identifier: identifiers[kept + 2], options: [.banner]) == .kept)
        // The stream ends: what it kept and what was expected of the app go with it.
        stream.detach()
        #expect(channels.keptAnswers.count == 0)
        #expect(channels.keptAnswers.bytes == 0)
        #expect(channels.keptAnswers.expected == 0)
        #expect(
            channels.reportPresentation(app: Self.app, identifier: identifiers[29], options: [.banner]) == .notInFront)
        await engine.hub.settle()
        await engine.shutdown()
    }

    /// Waits (at most 60 s) for `condition`, looking again every 10 ms.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !condition() { try await Sleep.for(.milliseconds(10)) }
        return condition()
    }
}
