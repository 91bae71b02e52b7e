import Foundation
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeCore

/// The fast paths that hand a store ``RecordCodec`` bytes it would otherwise encode itself
/// (`putPending(_:encodedRequests:app:)`, `dueEncoded`, `putDelivered(_:app:encodedRequest:)`,
/// `appendEvent(_:encoded:)`): each gives what its plain path gives, in every store, and the
/// durable stores take the bytes instead of encoding again.
@Suite("Store conformance: the encoded fast paths", .testThreads)
struct EncodedPathsTests {
    /// Requests of every trigger; the timed ones (three) due 1, 2 and 3 s after the samples' base.
    static var records: [PendingRequest] {
        Samples.triggers.enumerated().map { index, trigger in
            switch trigger {
            case .timeInterval?, .calendar?: pending("r\(index)", fire: Double(index), trigger: trigger)
            default: pending("r\(index)", fire: nil, trigger: trigger)
            }
        }
    }

    /// What a store holds of an app, sequences included.
    struct Contents: Equatable {
        var pending: [PendingRequest]
        var delivered: [DeliveredNotification]
    }

    static func contents(_ store: NotificationStore, app: String) throws -> Contents {
        Contents(pending: try store.pending(app: app), delivered: try store.delivered(app: app, thread: nil))
    }

    @Test(
        "putPending with encoded requests stores what putPending stores; an empty entry or a count that does not match is encoded there",
        arguments: StoreKind.allCases)
    func putPendingEncoded(kind: StoreKind) throws {
        let records = Self.records
        let encoded = records.map { RecordCodec.encode($0.request) }
        try kind.withStore { plain in
            try kind.withStore { fast in
                try plain.transaction { try plain.putPending(records, app: "a") }
                try fast.transaction { try fast.putPending(records, encodedRequests: encoded, app: "a") }
                #expect(try Self.contents(fast, app: "a") == Self.contents(plain, app: "a"))
                // Some entries left for the store to encode, then bytes for a list of another length.
                var partly = encoded
                partly[1] = []
                partly[3] = []
                try plain.putPending(records, app: "b")
                try fast.putPending(records, encodedRequests: partly, app: "b")
                try plain.putPending(records, app: "c")
                try fast.putPending(records, encodedRequests: Array(encoded.prefix(2)), app: "c")
                for app in ["b", "c"] { #expect(try Self.contents(fast, app: app) == Self.contents(plain, app: app)) }
            }
        }
    }

    @Test(
        "putPending encodes each request once, a replacement of a pending identifier too (the memory store: never)",
        arguments: StoreKind.allCases)
    func putPendingEncodesOnce(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.putPending(Self.records, app: "a")
            var moved = Self.records
            for index in moved.indices { moved[index].nextFireDate = Samples.base.addingTimeInterval(100) }
            let (_, count) = try RecordCodec.countingEncodes {
                try store.transaction {
                    try store.putPending(moved[0], app: "a")
                    try store.putPending(Array(moved[1...]), app: "a")
                    try store.putPending(pending("new", fire: 5), app: "a")
                }
            }
            #expect(count.requests == (kind == .memory ? 0 : moved.count + 1), "\(kind): \(count)")
            #expect(
                try store.pending(app: "a").map(\.nextFireDate).prefix(moved.count).allSatisfy {
                    $0 == Samples.base.addingTimeInterval(100)
                })
        }
    }

    @Test(
        "dueEncoded gives due's rows in due's order, each with its request's record from a durable store",
        arguments: StoreKind.allCases)
    func dueEncoded(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.putPending(Self.records, app: "a")
            try store.putPending([pending("b-late", fire: 50), pending("b-early", fire: 0.5)], app: "b")
            let before = Samples.base.addingTimeInterval(10)
            let (due, fast) = try store.transaction {
                (try store.due(before: before, limit: 10), try store.dueEncoded(before: before, limit: 10))
            }
            #expect(fast.map(\.app) == due.map(\.app))
            #expect(fast.map(\.pending) == due.map(\.pending))
            #expect(due.count == 4)
            for row in fast {
                if kind == .memory {
                    #expect(row.encoded == nil)
                } else {
                    let bytes = try #require(
                        row.encoded, "\(kind) gave no record for \(row.pending.request.identifier)")
                    #expect(bytes == RecordCodec.encode(row.pending.request))
                }
            }
            #expect(
                try store.transaction { try store.dueEncoded(before: before, limit: 2) }.map(\.pending)
                    == Array(due.prefix(2)).map(\.pending))
            #expect(try store.dueEncoded(before: before, limit: 0).isEmpty)
        }
    }

    @Test(
        "putDelivered with the pending row's record stores what putDelivered stores, and encodes no request",
        arguments: StoreKind.allCases)
    func putDeliveredEncoded(kind: StoreKind) throws {
        try kind.withStore { plain in
            try kind.withStore { fast in
                for store in [plain, fast] { try store.putPending(Self.records, app: "a") }
                let before = Samples.base.addingTimeInterval(10)
                let plainDue = try plain.transaction { try plain.due(before: before, limit: 10) }
                let fastDue = try fast.transaction { try fast.dueEncoded(before: before, limit: 10) }
                try plain.transaction {
                    for (app, pending) in plainDue {
                        try plain.putDelivered(DeliveredNotification(request: pending.request, date: before), app: app)
                    }
                }
                let (_, count) = try RecordCodec.countingEncodes {
                    try fast.transaction {
                        for (app, pending, encoded) in fastDue {
                            try fast.putDelivered(
                                DeliveredNotification(request: pending.request, date: before), app: app,
                                encodedRequest: encoded)
                        }
                    }
                }
                #expect(count.requests == 0, "\(kind) encoded requests it was given: \(count)")
                #expect(try fast.delivered(app: "a", thread: nil) == plain.delivered(app: "a", thread: nil))
                // Bytes that are not a request's record are not trusted: the notification is encoded.
                let odd = DeliveredNotification(request: Samples.request("odd"), date: before)
                try plain.putDelivered(odd, app: "a")
                try fast.putDelivered(odd, app: "a", encodedRequest: [1])
                #expect(try fast.delivered(app: "a", identifier: "odd") == plain.delivered(app: "a", identifier: "odd"))
            }
        }
    }

    @Test(
        "appendEvent with the event's record logs what appendEvent logs, and encodes no event",
        arguments: StoreKind.allCases)
    func appendEventEncoded(kind: StoreKind) throws {
        let events = EngineEvent.Kind.allCases.map { Samples.event("a", kind: $0) }
        let encoded = events.map { RecordCodec.encode($0) }
        try kind.withStore { plain in
            try kind.withStore { fast in
                let plainSequences = try plain.transaction { try events.map { try plain.appendEvent($0) } }
                let (fastSequences, count) = try RecordCodec.countingEncodes {
                    try fast.transaction {
                        try zip(events, encoded).map { event, bytes in try fast.appendEvent(event, encoded: bytes) }
                    }
                }
                #expect(count.events == 0, "\(kind) encoded events it was given: \(count)")
                #expect(fastSequences.count == plainSequences.count)
                let logged = try fast.events(after: 0, app: nil, limit: 100)
                #expect(logged == (try plain.events(after: 0, app: nil, limit: 100)))
                #expect(logged.count == events.count)
                #expect(try fast.newestEventSequence() == plain.newestEventSequence())
            }
        }
    }

    /// The engine on each store: a due request's delivery encodes the request once (inside its
    /// `delivered` event; the delivered record is built from the pending row's bytes, and a repeating
    /// request's moved row keeps them) and the event once (its bytes both counted toward the log's
    /// bound and stored).
    @Test(
        "firing a request, once or repeating, encodes it once and its event once, in every store",
        arguments: StoreKind.allCases, [false, true])
    func firingEncodesOnce(kind: StoreKind, repeats: Bool) async throws {
        let clock = ManualClock(now: Samples.base)
        try await kind.withEngine(clock: clock) { engine in
            _ = try await engine.requestAuthorization(app: "com.example.once", options: [.alert, .sound])
            _ = try await engine.add(
                [Samples.request("once", trigger: .timeInterval(60, repeats: repeats))], app: "com.example.once")
            let now = Samples.base.addingTimeInterval(61)
            let count = try await engine.perform { core in
                try RecordCodec.countingEncodes { try core.fireDue(now: now, limit: 10, listing: false) }.count
            }
            #expect(count == RecordCodec.EncodeCount(requests: 1, events: 1))
            #expect(try await engine.delivered(app: "com.example.once").map(\.request.identifier) == ["once"])
            let next = try await engine.pending(app: "com.example.once").first?.nextFireDate
            #expect(next == (repeats ? Samples.base.addingTimeInterval(120) : nil))
        }
    }
}
