import ChimeCore
import ChimePostgres
import Foundation
import PostgresTestServer
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

@Suite("Store conformance (memory, SQLite and PostgreSQL behave the same)", .testThreads)
struct StoreConformanceTests {
    @Test("apps: put, replace, list sorted, remove", arguments: StoreKind.allCases)
    func apps(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.transaction {
                try store.putApp(Samples.app("com.b"))
                try store.putApp(Samples.app("com.a"))
                var replaced = Samples.app("com.b")
                replaced.badge = 99
                try store.putApp(replaced)
            }
            #expect(try store.apps().map(\.bundleIdentifier) == ["com.a", "com.b"])
            #expect(try store.app("com.b")?.badge == 99)
            #expect(try store.app("com.a") == Samples.app("com.a"))
            #expect(try store.app("missing") == nil)
        }
    }

    @Test("categories: replaced as a whole, order kept", arguments: StoreKind.allCases)
    func categories(kind: StoreKind) throws {
        try kind.withStore { store in
            #expect(try store.categories(app: "a") == [])
            try store.setCategories(Samples.categories, app: "a")
            #expect(try store.categories(app: "a") == Samples.categories)
            try store.setCategories(Samples.categories.reversed(), app: "a")
            #expect(try store.categories(app: "a") == Samples.categories.reversed())
            try store.setCategories([], app: "a")
            #expect(try store.categories(app: "a") == [])
        }
    }

    @Test(
        "pending: listed by sequence; a replacement keeps its sequence; explicit sequences win",
        arguments: StoreKind.allCases)
    func pendingOrder(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.transaction {
                try store.putPending(pending("c", fire: 30), app: "a")
                try store.putPending(pending("a", fire: 10), app: "a")
                try store.putPending(pending("b", fire: 20), app: "a")
                try store.putPending(pending("other", fire: 5), app: "z")
            }
            #expect(try store.pending(app: "a").map(\.request.identifier) == ["c", "a", "b"])
            let before = try #require(try store.pending(app: "a", identifier: "c"))
            #expect(before.sequence == 1)
            try store.putPending(pending("c", fire: 99), app: "a")
            let after = try #require(try store.pending(app: "a", identifier: "c"))
            #expect(after.sequence == before.sequence)
            #expect(after.nextFireDate == Samples.base.addingTimeInterval(99))
            #expect(try store.pending(app: "a").map(\.request.identifier) == ["c", "a", "b"])
            // A new identifier after a replacement takes the next sequence (the replacement used none).
            try store.putPending(pending("d", fire: nil, trigger: nil), app: "a")
            #expect(try store.pending(app: "a", identifier: "d")?.sequence == 5)
            try store.putPending(pending("a", fire: 10, sequence: 100), app: "a")
            #expect(try store.pending(app: "a").map(\.request.identifier) == ["c", "b", "d", "a"])
            #expect(try store.pendingCount(app: "a") == 4)
            #expect(try store.pendingCount(app: nil) == 5)
            #expect(try store.pendingCount(app: "nobody") == 0)
            let full = try #require(try store.pending(app: "a", identifier: "b"))
            #expect(
                full
                    == PendingRequest(
                        request: Samples.request("b"), nextFireDate: Samples.base.addingTimeInterval(20),
                        anchor: Samples.base.addingTimeInterval(-1), sequence: 3))
        }
    }

    @Test("pending: bulk insert has the same semantics as one at a time", arguments: StoreKind.allCases)
    func bulk(kind: StoreKind) throws {
        try kind.withStore { store in
            let records = (0..<500).map { pending("bulk-\($0 % 400)", fire: Double($0 % 7)) }
            try store.transaction { try store.putPending(records, app: "a") }
            let listed = try store.pending(app: "a")
            #expect(listed.count == 400)
            #expect(listed.map(\.sequence) == Array(1...400))
            #expect(listed.first?.nextFireDate == Samples.base.addingTimeInterval(Double(400 % 7)))
            try store.putPending([], app: "a")
        }
    }

    @Test("pending: removal returns what existed, in the order asked", arguments: StoreKind.allCases)
    func pendingRemoval(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.putPending(["a", "b", "c", "d"].map { pending($0, fire: 1) }, app: "x")
            try store.putPending(pending("a", fire: 1), app: "y")
            #expect(try store.removePending(app: "x", identifiers: ["c", "zz", "a", "c"]) == ["c", "a"])
            #expect(try store.removeAllPending(app: "x") == ["b", "d"])
            #expect(try store.removeAllPending(app: "x") == [])
            #expect(try store.pendingCount(app: "y") == 1)
        }
    }

    @Test("due and soonest: by fire date then sequence, bounded by date and limit", arguments: StoreKind.allCases)
    func dueOrder(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.transaction {
                try store.putPending(pending("late", fire: 50), app: "a")
                try store.putPending(pending("tie-first", fire: 10), app: "b")
                try store.putPending(pending("early", fire: 5), app: "a")
                try store.putPending(pending("tie-second", fire: 10), app: "a")
                try store.putPending(pending("never", fire: nil, trigger: .push), app: "a")
                try store.putPending(pending("exact", fire: 20), app: "c")
            }
            let due = try store.due(before: Samples.base.addingTimeInterval(20), limit: 10)
            #expect(due.map(\.pending.request.identifier) == ["early", "tie-first", "tie-second", "exact"])
            #expect(due.map(\.app) == ["a", "b", "a", "c"])
            #expect(
                try store.due(before: Samples.base.addingTimeInterval(20), limit: 2).map(\.pending.request.identifier)
                    == ["early", "tie-first"])
            #expect(try store.due(before: Samples.base, limit: 10).isEmpty)
            #expect(try store.due(before: Samples.base, limit: 0).isEmpty)
            let soonest = try store.soonest(limit: 10)
            #expect(soonest.map(\.identifier) == ["early", "tie-first", "tie-second", "exact", "late"])
            #expect(soonest.map(\.date) == [5, 10, 10, 20, 50].map { Samples.base.addingTimeInterval($0) })
            #expect(soonest.map(\.sequence) == [3, 2, 4, 6, 1])
            #expect(try store.soonest(limit: 1).map(\.identifier) == ["early"])
        }
    }

    @Test("location and floating requests are found across apps, by sequence", arguments: StoreKind.allCases)
    func locationAndFloating(kind: StoreKind) throws {
        try kind.withStore { store in
            let region = CircularRegion(identifier: "r", center: Coordinate(latitude: 1, longitude: 2), radius: 10)
            var zoned = DateComponents(hour: 9)
            zoned.timeZone = TimeZone(identifier: "UTC")
            try store.transaction {
                try store.putPending(
                    pending("loc-1", fire: nil, trigger: .location(region, repeats: true), inside: true), app: "b")
                try store.putPending(
                    pending("float-1", fire: 3, trigger: .calendar(DateComponents(hour: 9), repeats: true)), app: "a")
                try store.putPending(pending("zoned", fire: 4, trigger: .calendar(zoned, repeats: true)), app: "a")
                try store.putPending(
                    pending("loc-2", fire: nil, trigger: .location(region, repeats: false), inside: false), app: "a")
                try store.putPending(
                    pending("float-2", fire: 1, trigger: .calendar(DateComponents(minute: 5), repeats: false)), app: "c"
                )
                try store.putPending(pending("timer", fire: 2), app: "a")
            }
            let locations = try store.locationPending()
            #expect(locations.map(\.pending.request.identifier) == ["loc-1", "loc-2"])
            #expect(locations.map(\.app) == ["b", "a"])
            #expect(locations.map(\.pending.inside) == [true, false])
            #expect(try store.floatingPending().map(\.pending.request.identifier) == ["float-1", "float-2"])
            // Changing a request's trigger moves it out of the floating set.
            try store.putPending(pending("float-1", fire: 3), app: "a")
            #expect(try store.floatingPending().map(\.pending.request.identifier) == ["float-2"])
        }
    }

    @Test("delivered: newest first, replaced by identifier, filtered by thread", arguments: StoreKind.allCases)
    func delivered(kind: StoreKind) throws {
        try kind.withStore { store in
            let s1 = try store.putDelivered(Samples.delivered("one", at: 10, thread: "t1"), app: "a")
            let s2 = try store.putDelivered(Samples.delivered("two", at: 20, thread: "t2"), app: "a")
            let s3 = try store.putDelivered(Samples.delivered("three", at: 10, thread: "t1"), app: "a")
            try store.putDelivered(Samples.delivered("elsewhere", at: 30), app: "b")
            #expect([s1, s2, s3] == [1, 2, 3])
            #expect(try store.delivered(app: "a", thread: nil).map(\.request.identifier) == ["two", "three", "one"])
            #expect(try store.delivered(app: "a", thread: "t1").map(\.request.identifier) == ["three", "one"])
            #expect(try store.delivered(app: "a", thread: "none").isEmpty)
            // Replacing by identifier takes a new sequence and date.
            let s4 = try store.putDelivered(Samples.delivered("one", at: 10, thread: "t1"), app: "a")
            #expect(s4 == 5)
            #expect(try store.delivered(app: "a", thread: "t1").map(\.request.identifier) == ["one", "three"])
            var explicit = Samples.delivered("explicit", at: 0)
            explicit.sequence = 77
            #expect(try store.putDelivered(explicit, app: "a") == 77)
            #expect(try store.delivered(app: "a", identifier: "explicit") == explicit)
            #expect(try store.delivered(app: "a", identifier: "two")?.sequence == 2)
            #expect(try store.deliveredCount(app: "a") == 4)
            #expect(try store.deliveredCount(app: nil) == 5)
            #expect(try store.removeDelivered(app: "a", identifiers: ["two", "nope"]) == ["two"])
            #expect(try store.removeAllDelivered(app: "a", thread: "t1") == ["one", "three"])
            #expect(try store.removeAllDelivered(app: "a", thread: nil) == ["explicit"])
            #expect(try store.deliveredCount(app: nil) == 1)
        }
    }

    @Test("outbox: ids grow, removal by app and id", arguments: StoreKind.allCases)
    func outbox(kind: StoreKind) throws {
        try kind.withStore { store in
            let id1 = try store.appendResponse(Samples.response("r1"), app: "a")
            let id2 = try store.appendResponse(Samples.response("r2"), app: "b")
            let id3 = try store.appendResponse(Samples.response("r3"), app: "a")
            #expect(id1 < id2 && id2 < id3)
            let listed = try store.responses(app: "a")
            #expect(listed.map(\.id) == [id1, id3])
            var expected = Samples.response("r1")
            expected.id = id1
            #expect(listed.first == expected)
            #expect(try store.removeResponse(app: "b", id: id1) == false)
            #expect(try store.removeResponse(app: "a", id: id1) == true)
            #expect(try store.removeResponse(app: "a", id: id1) == false)
            let id4 = try store.appendResponse(Samples.response("r4"), app: "a")
            #expect(id4 > id3)
            #expect(try store.responses(app: "a").map(\.id) == [id3, id4])
        }
    }

    @Test("events: sequences grow; after, app filter, limit, prune, oldest", arguments: StoreKind.allCases)
    func events(kind: StoreKind) throws {
        try kind.withStore { store in
            #expect(try store.oldestEventSequence() == 0)
            var sequences: [Int64] = []
            for index in 0..<10 {
                sequences.append(try store.appendEvent(Samples.event(index % 2 == 0 ? "even" : "odd", kind: .removed)))
            }
            #expect(sequences == Array(1...10))
            #expect(try store.events(after: 0, app: nil, limit: 100).map(\.sequence) == sequences)
            #expect(try store.events(after: 3, app: "even", limit: 2).map(\.sequence) == [5, 7])
            #expect(try store.events(after: 8, app: nil, limit: 100).map(\.sequence) == [9, 10])
            #expect(try store.events(after: 0, app: nil, limit: 0).isEmpty)
            var expected = Samples.event("even", kind: .removed)
            expected.sequence = 1
            #expect(try store.events(after: 0, app: "even", limit: 1) == [expected])
            try store.pruneEvents(keeping: 4)
            #expect(try store.oldestEventSequence() == 7)
            try store.pruneEvents(keeping: 10)
            #expect(try store.oldestEventSequence() == 7)
            #expect(try store.appendEvent(Samples.event("x")) == 11)
            try store.pruneEvents(keeping: 0)
            #expect(try store.oldestEventSequence() == 0)
            #expect(try store.appendEvent(Samples.event("x")) == 12)
        }
    }

    @Test("pages: every list read a page at a time gives the whole list, in order, once", arguments: StoreKind.allCases)
    func pages(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.transaction {
                for index in 0..<25 { try store.putApp(Samples.app("com.app\(String(format: "%02d", index))")) }
                try store.putPending((0..<37).map { pending("p\($0)", fire: Double($0)) }, app: "a")
                // Ties on the date: the sequence orders them.
                for index in 0..<31 {
                    try store.putDelivered(
                        Samples.delivered("d\(index)", at: Double(index / 4), thread: index % 3 == 0 ? "t" : "u"),
                        app: "a")
                }
                for index in 0..<23 { _ = try store.appendResponse(Samples.response("r\(index)"), app: "a") }
            }
            func walk<T>(_ page: (T?) throws -> [T]) rethrows -> [T] {
                var all: [T] = []
                while true {
                    let items = try page(all.last)
                    if items.isEmpty { return all }
                    all += items
                }
            }
            let apps = try walk { (last: AppRecord?) in try store.apps(after: last?.bundleIdentifier, limit: 4) }
            #expect(apps == (try store.apps()))
            let requests = try walk { (last: PendingRequest?) in
                try store.pending(app: "a", after: last?.sequence ?? 0, limit: 5)
            }
            #expect(requests == (try store.pending(app: "a")))
            for thread in [nil, "t"] as [String?] {
                let delivered = try walk { (last: DeliveredNotification?) in
                    try store.delivered(
                        app: "a", thread: thread,
                        after: last.map { DeliveredCursor(date: $0.date, sequence: $0.sequence) }, limit: 3)
                }
                #expect(delivered == (try store.delivered(app: "a", thread: thread)))
            }
            let responses = try walk { (last: NotificationResponse?) in
                try store.responses(app: "a", after: last?.id ?? 0, limit: 6)
            }
            #expect(responses == (try store.responses(app: "a")))
            #expect(try store.pending(app: "b", after: 0, limit: 10).isEmpty)
        }
    }

    @Test("the event log is bounded by count, by bytes and by age", arguments: StoreKind.allCases)
    func eventRetention(kind: StoreKind) throws {
        try kind.withStore { store in
            func append(_ count: Int, at offset: Double) throws {
                for _ in 0..<count {
                    var event = Samples.event("a")
                    event.date = Samples.base.addingTimeInterval(offset)
                    _ = try store.appendEvent(event)
                }
            }
            try append(10, at: 0)
            try append(10, at: 1000)
            let size = RecordCodec.encode(try store.events(after: 0, app: nil, limit: 1)[0]).count
            let now = Samples.base.addingTimeInterval(1000)
            // Count.
            try store.pruneEvents(EventRetention(count: 15, bytes: 1 << 30, age: 1e9), now: now)
            #expect(try store.events(after: 0, app: nil, limit: 100).count == 15)
            // Bytes: the newest that fit.
            try store.pruneEvents(EventRetention(count: 100, bytes: size * 12 + size / 2, age: 1e9), now: now)
            #expect(try store.events(after: 0, app: nil, limit: 100).map(\.sequence) == Array(9...20))
            // Age: dated before now - age.
            try store.pruneEvents(EventRetention(count: 100, bytes: 1 << 30, age: 500), now: now)
            #expect(try store.events(after: 0, app: nil, limit: 100).map(\.sequence) == Array(11...20))
            try store.pruneEvents(
                EventRetention(count: 100, bytes: 1 << 30, age: 500), now: now.addingTimeInterval(10_000))
            #expect(try store.events(after: 0, app: nil, limit: 100).isEmpty)
        }
    }

    @Test("key/value: set, replace, remove", arguments: StoreKind.allCases)
    func values(kind: StoreKind) throws {
        try kind.withStore { store in
            #expect(try store.value(forKey: "tz") == nil)
            try store.setValue("Europe/Paris", forKey: "tz")
            try store.setValue("", forKey: "empty")
            try store.setValue("Asia/Tokyo", forKey: "tz")
            #expect(try store.value(forKey: "tz") == "Asia/Tokyo")
            #expect(try store.value(forKey: "empty") == "")
            try store.setValue(nil, forKey: "tz")
            #expect(try store.value(forKey: "tz") == nil)
        }
    }

    @Test("removeApp removes everything the app owns and nothing else", arguments: StoreKind.allCases)
    func removeApp(kind: StoreKind) throws {
        try kind.withStore { store in
            for app in ["gone", "kept"] {
                try store.putApp(Samples.app(app))
                try store.setCategories(Samples.categories, app: app)
                try store.putPending(pending("p", fire: 1), app: app)
                try store.putDelivered(Samples.delivered("d", at: 1), app: app)
                _ = try store.appendResponse(Samples.response("r"), app: app)
                _ = try store.appendEvent(Samples.event(app))
            }
            try store.setValue("v", forKey: "k")
            try store.removeApp("gone")
            #expect(try store.app("gone") == nil)
            #expect(try store.categories(app: "gone").isEmpty)
            #expect(try store.pending(app: "gone").isEmpty)
            #expect(try store.delivered(app: "gone", thread: nil).isEmpty)
            #expect(try store.responses(app: "gone").isEmpty)
            #expect(try store.events(after: 0, app: nil, limit: 10).map(\.app) == ["kept"])
            #expect(try store.apps().map(\.bundleIdentifier) == ["kept"])
            #expect(try store.pendingCount(app: nil) == 1)
            #expect(try store.deliveredCount(app: nil) == 1)
            #expect(try store.responses(app: "kept").count == 1)
            #expect(try store.value(forKey: "k") == "v")
        }
    }

    struct Boom: Error {}

    @Test("a throw inside a transaction restores everything, sequences included", arguments: StoreKind.allCases)
    func rollback(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.putPending(pending("kept", fire: 1), app: "a")
            var thrown: (any Error)?
            do {
                try store.transaction { () throws -> Void in
                    try store.putPending(pending("lost", fire: 2), app: "a")
                    try store.putPending(pending("kept", fire: 50), app: "a")
                    try store.putApp(Samples.app("a"))
                    try store.putDelivered(Samples.delivered("d", at: 1), app: "a")
                    _ = try store.appendResponse(Samples.response("r"), app: "a")
                    _ = try store.appendEvent(Samples.event("a"))
                    try store.setValue("v", forKey: "k")
                    try store.transaction { _ = try store.removePending(app: "a", identifiers: ["kept"]) }
                    throw Boom()
                }
            } catch {
                thrown = error
            }
            #expect(thrown is Boom)
            #expect(try store.pending(app: "a").map(\.request.identifier) == ["kept"])
            #expect(try store.pending(app: "a", identifier: "kept")?.nextFireDate == Samples.base.addingTimeInterval(1))
            #expect(try store.app("a") == nil)
            #expect(try store.deliveredCount(app: nil) == 0)
            #expect(try store.responses(app: "a").isEmpty)
            #expect(try store.oldestEventSequence() == 0)
            #expect(try store.value(forKey: "k") == nil)
            // Sequences taken in the rolled-back transaction are handed out again (PostgreSQL: only
            // the event log's; the others move on).
            try store.putPending(pending("next", fire: 3), app: "a")
            let next = try #require(try store.pending(app: "a", identifier: "next")?.sequence)
            let response = try store.appendResponse(Samples.response("r"), app: "a")
            if kind.reusesRolledBackNumbers {
                #expect(next == 2)
                #expect(response == 1)
            } else {
                #expect(next > 2)
                #expect(response > 1)
            }
            #expect(try store.appendEvent(Samples.event("a")) == 1)
            // A nested transaction commits with its outer one.
            try store.transaction {
                try store.transaction { try store.setValue("nested", forKey: "k") }
                #expect(try store.value(forKey: "k") == "nested")
            }
            #expect(try store.value(forKey: "k") == "nested")
        }
    }

    @Test("a random mix of operations gives the same answers from every store")
    func randomTranscript() throws {
        /// With `numbers` false, pending and delivered sequences are left out (PostgreSQL does not
        /// reuse those of rolled-back transactions); their order is still compared.
        func transcript(_ store: NotificationStore, numbers: Bool = true) throws -> [String] {
            func number(_ value: Int64) -> String { numbers ? "\(value)" : "#" }
            var generator = SplitMix64(seed: 7)
            var out: [String] = []
            for step in 0..<400 {
                let app = "app\(generator.next() % 3)"
                let identifier = "id\(generator.next() % 12)"
                let fire = Double(generator.next() % 20)
                switch generator.next() % 9 {
                case 0, 1:
                    try store.putPending(pending(identifier, fire: generator.next() % 4 == 0 ? nil : fire), app: app)
                case 2:
                    out.append(
                        "\(try store.removePending(app: app, identifiers: [identifier, "id\(generator.next() % 12)"]))")
                case 3:
                    out.append(
                        number(
                            try store.putDelivered(
                                Samples.delivered(identifier, at: fire, thread: "t\(generator.next() % 2)"), app: app)))
                case 4: out.append("\(try store.removeDelivered(app: app, identifiers: [identifier]))")
                case 5: out.append("\(try store.appendEvent(Samples.event(app)))")
                case 6:
                    do {
                        try store.transaction {
                            try store.putPending(pending("tx\(step)", fire: fire), app: app)
                            if generator.next() % 2 == 0 { throw Boom() }
                        }
                    } catch is Boom { out.append("rolled back") }
                case 7: try store.pruneEvents(keeping: Int(generator.next() % 5))
                default:
                    out.append(
                        "\(try store.removeAllDelivered(app: app, thread: generator.next() % 2 == 0 ? nil : "t1"))")
                }
                out.append(
                    try store.due(before: Samples.base.addingTimeInterval(10), limit: 5).map {
                        "\($0.app)/\($0.pending.request.identifier)/\(number($0.pending.sequence))"
                    }.joined(separator: ","))
                out.append(
                    try store.soonest(limit: 3).map { "\($0.app)/\($0.identifier)/\(number($0.sequence))" }.joined(
                        separator: ","))
                out.append(
                    try store.pending(app: app).map { "\($0.request.identifier)/\(number($0.sequence))" }.joined(
                        separator: ","))
                out.append(
                    try store.delivered(app: app, thread: nil).map { "\($0.request.identifier)/\(number($0.sequence))" }
                        .joined(separator: ","))
                out.append(
                    "\(try store.events(after: 0, app: app, limit: 3).map(\.sequence)) \(try store.oldestEventSequence())"
                )
            }
            return out
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let memory = try transcript(MemoryStore())
        let sqlite = try transcript(SQLiteStore(path: directory.path("random.sqlite")))
        #expect(memory.count == sqlite.count)
        for (index, (m, s)) in zip(memory, sqlite).enumerated() where m != s {
            Issue.record("step \(index): memory \(m) ≠ sqlite \(s)")
            break
        }
        let postgresStore = try PostgresStore(url: try PostgresTestServer.shared().makeSchema())
        defer { postgresStore.close() }
        let postgres = try transcript(postgresStore, numbers: false)
        let reference = try transcript(MemoryStore(), numbers: false)
        #expect(reference.count == postgres.count)
        for (index, (m, p)) in zip(reference, postgres).enumerated() where m != p {
            Issue.record("step \(index): memory \(m) ≠ postgres \(p)")
            break
        }
    }
}
