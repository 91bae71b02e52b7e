import ChimeCore
import ChimePostgres
import Foundation
import PostgresTestServer
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

/// Recurrence-rule triggers in the stores (memory, SQLite, PostgreSQL) and in the record format.
@Suite("Recurrence triggers in the stores", .testThreads)
struct RecurrenceStoreTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func date(_ text: String) throws -> Date { try #require(JSONMapping.parseDate(text)) }

    /// The engines' clock: before the rule's first date (29 January 2027) whatever the day the suite
    /// runs on (on the system clock the first date an add answers moves once that day has passed).
    static let start = JSONMapping.parseDate("2026-12-02T12:00:00Z")!

    /// The last workday of each month at 17:00 in Berlin, four times, without 31 March.
    static func lastWorkdays() throws -> RecurrenceSchedule {
        try RecurrenceSchedule(
            rule: RecurrenceRule(parsing: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=4"),
            start: DateComponents(year: 2027, month: 1, day: 1, hour: 17), timeZone: berlin,
            exceptionDates: [try date("2027-03-31T15:00:00Z")])
    }

    @Test("a recurrence trigger round-trips in format 4; other records keep their lower formats")
    func format() throws {
        let request = Samples.request("rrule", trigger: .recurrence(try Self.lastWorkdays()))
        let bytes = RecordCodec.encode(request)
        #expect(bytes.first == 4)
        let back = try RecordCodec.decodeRequest(bytes)
        #expect(back == request)
        guard case .recurrence(let schedule)? = back.trigger else { throw CLIError("not a recurrence") }
        let after = try Self.date("2027-01-01T00:00:00Z")
        #expect(schedule.next(10, after: after) == (try Self.lastWorkdays()).next(10, after: after))
        #expect(RecordCodec.encode(Samples.request("plain", trigger: .timeInterval(60, repeats: false))).first == 1)
        // With thumbnail options too: one version for the whole record, the content read as format 4 writes it.
        var content = Samples.content()
        content.attachments[0].thumbnailHidden = true
        let both = NotificationRequest(
            identifier: "both", content: content, trigger: .recurrence(try Self.lastWorkdays()))
        #expect(try RecordCodec.decodeRequest(RecordCodec.encode(both)) == both)
        let delivered = DeliveredNotification(request: both, date: after, sequence: 7)
        #expect(
            try RecordCodec.decodeDelivered(RecordCodec.encode(delivered, encodedRequest: RecordCodec.encode(both)))
                == delivered)
        // A reader of formats 1-3 meets version 4 and says so; a kind 5 in a version 1 record is corrupt.
        var old = RecordCodec.encode(Samples.request("x", trigger: .push))
        old[old.count - 1] = 5
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(old) }
    }

    /// A request record as Chime wrote it before format 4 (the v1 fixture store's `pending-5`, a push
    /// trigger): still read.
    @Test("a request record written before recurrence triggers still decodes")
    func oldRequestRecord() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/store-v1.sqlite")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.copyItem(atPath: url.path, toPath: directory.path("store.sqlite"))
        let store = try SQLiteStore(path: directory.path("store.sqlite"))
        defer { store.close() }
        let pending = try store.pending(app: "com.example.fixture")
        #expect(pending.count >= 6)
        #expect(pending.map(\.request.trigger?.kindName).contains("calendar"))
        for row in pending {
            // Written again in today's format, each reads back the same.
            #expect(try RecordCodec.decodeRequest(RecordCodec.encode(row.request)) == row.request)
        }
    }

    @Test(
        "pending: a recurrence request is stored, read back and due at its date in every store",
        arguments: StoreKind.allCases)
    func conformance(kind: StoreKind) throws {
        let schedule = try Self.lastWorkdays()
        let first = try #require(schedule.next(after: try Self.date("2027-01-01T00:00:00Z")))
        let row = PendingRequest(
            request: Samples.request("rrule", trigger: .recurrence(schedule)), nextFireDate: first,
            anchor: try Self.date("2027-01-01T00:00:00Z"))
        try kind.withStore { store in
            try store.transaction { try store.putPending(row, app: "a") }
            let read = try store.pending(app: "a")
            #expect(read.map(\.request) == [row.request])
            #expect(read.first?.nextFireDate == first)
            #expect(try store.due(before: first.addingTimeInterval(-1), limit: 10).isEmpty)
            let due = try store.dueEncoded(before: first, limit: 10)
            #expect(due.map(\.pending.request) == [row.request])
            // The stores that hand back the stored bytes hand back format 4.
            #expect(due.first?.encoded.map { $0.first == 4 } ?? true)
            #expect(try store.locationPending().isEmpty)
            #expect(try store.floatingPending().isEmpty)
        }
    }

    /// The engine firing a rule at its dates on each store: the last workdays of January, February
    /// and April (31 March is an exception date), then the request is gone (COUNT=4 counts the
    /// skipped one).
    @Test("the engine fires a rule at its dates and ends it, on every store", arguments: StoreKind.allCases)
    func engineFires(kind: StoreKind) async throws {
        let schedule = try Self.lastWorkdays()
        try await kind.withEngine(clock: ManualClock(now: Self.start)) { engine in
            _ = try await engine.requestAuthorization(app: "com.example.a", options: [.alert])
            let dates = try await engine.add(
                [Samples.request("report", trigger: .recurrence(schedule))], app: "com.example.a")
            #expect(dates == [try Self.date("2027-01-29T16:00:00Z")])
            var fired: [Date] = []
            while let next = try await engine.nextFireDate() {
                fired += try await engine.fireDue(now: next).map(\.date)
                if fired.count > 10 { break }
            }
            #expect(
                fired == [
                    try Self.date("2027-01-29T16:00:00Z"), try Self.date("2027-02-26T16:00:00Z"),
                    try Self.date("2027-04-30T15:00:00Z"),
                ])
            #expect(try await engine.pending(app: "com.example.a").isEmpty)
        }
    }

    @Test("a restart of the engine on its SQLite file goes on with the next date")
    func restart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("chime.sqlite")
        let schedule = try Self.lastWorkdays()
        do {
            let store = try SQLiteStore(path: path)
            let engine = NotificationEngine(store: store, clock: ManualClock(now: Self.start), timeZone: Self.berlin)
            _ = try await engine.requestAuthorization(app: "com.example.a", options: [.alert])
            _ = try await engine.add([Samples.request("report", trigger: .recurrence(schedule))], app: "com.example.a")
            #expect(
                try await engine.fireDue(now: try Self.date("2027-01-29T16:00:00Z")).map(\.date) == [
                    try Self.date("2027-01-29T16:00:00Z")
                ])
            await engine.shutdown()
            store.close()
        }
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        let engine = NotificationEngine(store: store, clock: ManualClock(now: Self.start), timeZone: Self.berlin)
        #expect(try await engine.nextFireDate() == (try Self.date("2027-02-26T16:00:00Z")))
        #expect(try await engine.fireDue(now: try Self.date("2027-02-26T15:59:59Z")).isEmpty)
        #expect(try await engine.fireDue(now: try Self.date("2027-02-26T16:00:00Z")).count == 1)
        #expect(try await engine.nextFireDate() == (try Self.date("2027-04-30T15:00:00Z")))
        await engine.shutdown()
    }
}

private struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
