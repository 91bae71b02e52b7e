import Foundation

/// The soonest pending fire dates, held in memory so the scheduler knows when to wake without
/// asking the store; everything else stays in the store. Memory is bounded by `capacity`,
/// whatever the number of pending requests.
///
/// Invariant: every timed pending request that is not in the window fires at or after `horizon`
/// (and when `complete`, the window holds every timed pending request). So the window's first entry
/// is the next fire date overall, and when the window runs empty it is refilled from the store.
struct ScheduleWindow {
    /// An app and a request identifier, compared literally (see ``LiteralKey``), as the store does.
    struct Key: Hashable {
        var app: String
        var identifier: String
        static func == (a: Key, b: Key) -> Bool { a.app.isLiterally(b.app) && a.identifier.isLiterally(b.identifier) }
        func hash(into hasher: inout Hasher) {
            LiteralKey(app).hash(into: &hasher)
            LiteralKey(identifier).hash(into: &hasher)
        }
    }

    struct Entry: Comparable {
        var date: Date
        var sequence: Int64
        var key: Key
        static func < (a: Entry, b: Entry) -> Bool { (a.date, a.sequence) < (b.date, b.sequence) }
        static func == (a: Entry, b: Entry) -> Bool { a.key == b.key && a.date == b.date && a.sequence == b.sequence }
    }

    let capacity: Int
    /// Sorted descending, so the soonest entry is the last one: firing removes from the end in O(1).
    private(set) var entries: [Entry] = []
    private var dates: [Key: Entry] = [:]
    private(set) var complete = true
    private(set) var horizon = Date.distantFuture

    init(capacity: Int) { self.capacity = max(capacity, 4) }

    var count: Int { entries.count }
    /// Whether the store may hold a key the window does not: nothing in the window, or complete,
    /// says the store has none.
    func mayHold(_ key: Key) -> Bool { !complete || dates[key] != nil }
    var first: Entry? { entries.last }
    /// Whether the store may hold requests the window does not.
    var needsRefill: Bool { !complete && entries.count < capacity / 4 }

    /// Replaces the contents with the store's soonest requests.
    mutating func load(_ soonest: [(app: String, identifier: String, date: Date, sequence: Int64)]) {
        entries = soonest.map {
            Entry(date: $0.date, sequence: $0.sequence, key: Key(app: $0.app, identifier: $0.identifier))
        }
        entries.sort(by: >)
        dates = Dictionary(entries.map { ($0.key, $0) }, uniquingKeysWith: { _, b in b })
        complete = soonest.count < capacity
        horizon = complete ? .distantFuture : (entries.first?.date ?? .distantFuture)
    }

    /// Records that a request now fires at `date` (or no longer has a fire date, when `nil`).
    mutating func set(_ key: Key, date: Date?, sequence: Int64) {
        remove(key)
        guard let date, complete || date < horizon else { return }
        let entry = Entry(date: date, sequence: sequence, key: key)
        entries.insert(entry, at: entries.partitioningIndex { $0 < entry || $0 == entry })
        dates[key] = entry
        if entries.count > capacity {
            let dropped = entries.removeFirst()
            dates[dropped.key] = nil
            complete = false
            horizon = min(horizon, dropped.date)
        }
    }

    mutating func remove(_ key: Key) {
        guard let entry = dates.removeValue(forKey: key) else { return }
        if entries.last?.key == key {
            entries.removeLast()
            return
        }
        let index = entries.partitioningIndex { $0 < entry || $0 == entry }
        if index < entries.count, entries[index].key == key {
            entries.remove(at: index)
        } else if let index = entries.firstIndex(where: { $0.key == key }) {
            entries.remove(at: index)
        }
    }

    /// Whether to reload from the store: running low while the store holds more, or empty while
    /// it may hold some.
    var wantsRefill: Bool { needsRefill || (entries.isEmpty && !complete) }

    /// Whether, as far as the window knows, nothing is due by `now`: its first entry is later, or
    /// it is empty and holds everything.
    func nothingDue(by now: Date) -> Bool { first.map { $0.date > now } ?? complete }

    /// Drops the entries due by `now` (after the store said what is due: the rest is gone).
    mutating func dropDue(by now: Date) {
        while let first, first.date <= now { remove(first.key) }
    }

    mutating func removeApp(_ app: String) {
        entries.removeAll { $0.key.app.isLiterally(app) }
        dates = dates.filter { !$0.key.app.isLiterally(app) }
    }
}
