import Foundation

/// An app's scheduled summary (iOS 15's *Scheduled Summary*): while it is set, the app's passive
/// and active notifications are delivered quietly — in the delivered list, with their badge, but
/// with no banner, no sound, no desktop pop-up and no push — and held for the summary; at each of
/// the times the user picked, one summary notification lists what was held, ordered by
/// ``NotificationContent/relevanceScore`` (then by time), and counts the rest with
/// ``NotificationContent/summaryArgument`` and ``NotificationContent/summaryArgumentCount`` as iOS
/// does ("5 more notifications from Alice and Bob"). Time-sensitive and critical notifications are
/// delivered at once, as a focus lets them through (see ``FocusMode``).
///
/// On iOS the user picks the times in Settings for every app in the summary; Chime keeps them per
/// app (the service's owner sets them), and ``NotificationSettings/scheduledDeliverySetting`` is
/// `.enabled` for an app in a summary.
///
/// ```swift
/// let summary = try ScheduledSummary(times: ["08:00", "18:00"], timeZone: "Europe/Berlin")
/// try await engine.setScheduledSummary(summary, app: "com.example.news")
/// ```
public struct ScheduledSummary: Sendable, Hashable {
    /// The times of day it is delivered, as minutes after midnight (0 ..< 1440), ascending, each once.
    public private(set) var times: [Int]
    /// An IANA time zone identifier, as `Europe/Berlin`: the times are wall times there. A time a
    /// daylight-saving change skips moves forward by the gap; one that occurs twice is its first pass.
    public var timeZone: String

    /// The most times a day (as iOS allows).
    public static let maximumTimes = 12
    /// The most apps in a scheduled summary.
    public static let maximumApps = 256
    /// How many held notifications a summary keeps to list and name (the best by relevance; the
    /// rest are still counted).
    static let keptItems = 64
    /// How many held notifications the summary's text names before "N more notifications".
    public static let listedItems = 3

    /// A summary at `times` (`HH:MM`, 24-hour) in `timeZone`.
    public init(times: [String], timeZone: String) throws(ChimeError) {
        var minutes: [Int] = []
        for (index, text) in times.enumerated() {
            minutes.append(try FocusSchedule.minutes(text, field: "times[\(index)]"))
        }
        try self.init(minutes: minutes, timeZone: timeZone)
    }

    /// A summary at `minutes` after midnight in `timeZone`.
    public init(minutes: [Int], timeZone: String) throws(ChimeError) {
        guard !minutes.isEmpty else {
            throw ChimeError(
                .invalidValue, field: "times",
                "times is empty; give 1 to \(Self.maximumTimes) times of day as HH:MM, such as [\"08:00\", \"18:00\"]")
        }
        guard minutes.count <= Self.maximumTimes else {
            throw ChimeError(
                .invalidValue, field: "times", "times has \(minutes.count) entries; at most \(Self.maximumTimes) a day")
        }
        for (index, minute) in minutes.enumerated() where !(0..<1440).contains(minute) {
            throw ChimeError(
                .invalidValue, field: "times[\(index)]",
                "times[\(index)] is minute \(minute) of the day; accepted: 00:00 to 23:59")
        }
        for (index, minute) in minutes.enumerated() where minutes[..<index].contains(minute) {
            throw ChimeError(
                .invalidValue, field: "times[\(index)]",
                "times[\(index)] (\(FocusSchedule.text(minute))) is given twice; give each time once")
        }
        guard TimeZone(identifier: timeZone) != nil else {
            throw ChimeError(
                .invalidValue, field: "timeZone",
                "timeZone \"\(timeZone.prefix(80))\" is not a known time zone; use an IANA name such as Europe/Berlin or UTC"
            )
        }
        self.times = minutes.sorted()
        self.timeZone = timeZone
    }

    /// The times as `HH:MM`.
    public var timeTexts: [String] { times.map(FocusSchedule.text) }

    /// The first summary time strictly after `date`.
    public func next(after date: Date) -> Date? {
        let zone = TimeZone(identifier: timeZone) ?? TimeZone(secondsFromGMT: 0)!
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: date)
        let today = seconds.floorDivided(by: 86_400)
        var best: Date?
        for day in (today - 1)...(today + 2) {
            let civil = CivilDays.date(days: day)
            for minute in times {
                guard
                    let instant = RecurrenceSchedule.instant(
                        ofWallTime: DateComponents(
                            year: civil.year, month: civil.month, day: civil.day,
                            hour: minute / 60, minute: minute % 60), in: zone),
                    instant > date
                else { continue }
                if best.map({ instant < $0 }) ?? true { best = instant }
            }
        }
        return best
    }
}

/// An app's scheduled summary as the engine answers it: when the next one comes and how many
/// notifications it holds so far.
public struct ScheduledSummaryStatus: Sendable, Hashable {
    /// The app's bundle identifier.
    public var app: String
    public var summary: ScheduledSummary
    /// When the next summary is delivered.
    public var nextDelivery: Date?
    /// Notifications held for it so far.
    public var held: Int

    public init(app: String, summary: ScheduledSummary, nextDelivery: Date?, held: Int) {
        self.app = app
        self.summary = summary
        self.nextDelivery = nextDelivery
        self.held = held
    }
}

/// What a scheduled summary holds for one app until it is delivered, kept in the store's key/value
/// table under `summary.held.APP`: how many notifications (and items, by their
/// `summaryArgumentCount`), and the best of them by relevance to list.
struct SummaryHeld: Sendable, Hashable {
    struct Item: Sendable, Hashable {
        var identifier: String
        var title: String
        var body: String
        var relevanceScore: Double
        var date: Date
        var summaryArgument: String
        var summaryArgumentCount: Int
        var category: String

        /// How many items it stands for: its `summaryArgumentCount`, or 1 when that is 0 (iOS's rule).
        var items: Int { summaryArgumentCount > 0 ? summaryArgumentCount : 1 }

        /// Higher relevance first, then earlier.
        static func before(_ a: Item, _ b: Item) -> Bool {
            a.relevanceScore != b.relevanceScore ? a.relevanceScore > b.relevanceScore : a.date < b.date
        }
    }

    /// When it is due: the first summary time after the first notification held.
    var due: Date?
    /// Notifications held.
    var count = 0
    /// Items held (each notification's summaryArgumentCount, or 1).
    var items = 0
    /// The best ``ScheduledSummary/keptItems`` held, best first.
    var kept: [Item] = []

    static func key(_ app: String) -> String { "summary.held.\(app)" }

    mutating func add(_ item: Item) {
        count += 1
        items += item.items
        let index = kept.firstIndex { Item.before(item, $0) } ?? kept.count
        kept.insert(item, at: index)
        if kept.count > ScheduledSummary.keptItems { kept.removeLast() }
    }

    var serialized: String {
        let list: [JSONValue] = kept.map { item in
            [
                "id": .string(item.identifier), "title": .string(item.title), "body": .string(item.body),
                "score": .number(item.relevanceScore), "date": JSONMapping.json(item.date),
                "arg": .string(item.summaryArgument),
                "argCount": .integer(Int64(item.summaryArgumentCount)), "category": .string(item.category),
            ]
        }
        let object: JSONObject = [
            "due": due.map(JSONMapping.json) ?? .null, "count": .integer(Int64(count)),
            "items": .integer(Int64(items)), "kept": .array(list),
        ]
        return JSONValue.object(object).serialized()
    }

    init() {}

    /// A stored record; one that cannot be read holds nothing.
    init(stored text: String) {
        guard let json = try? JSONValue.parse(text) else { return }
        if case .string(let date)? = json["due"] { due = JSONMapping.parseDate(date) }
        if case .integer(let n)? = json["count"] { count = Int(n) }
        if case .integer(let n)? = json["items"] { items = Int(n) }
        guard case .array(let list)? = json["kept"] else { return }
        for entry in list {
            guard case .string(let identifier)? = entry["id"], case .string(let dateText)? = entry["date"],
                let date = JSONMapping.parseDate(dateText)
            else { continue }
            func text(_ key: String) -> String { if case .string(let s)? = entry[key] { s } else { "" } }
            var score = 0.0
            switch entry["score"] {
            case .number(let n)?: score = n
            case .integer(let n)?: score = Double(n)
            default: break
            }
            var argCount = 0
            if case .integer(let n)? = entry["argCount"] { argCount = Int(n) }
            kept.append(
                Item(
                    identifier: identifier, title: text("title"), body: text("body"), relevanceScore: score, date: date,
                    summaryArgument: text("arg"), summaryArgumentCount: argCount, category: text("category")))
        }
    }

    /// The summary's text: a line for each of the best ``ScheduledSummary/listedItems`` ("title:
    /// body"), then the rest counted as iOS counts a group: each notification stands for its
    /// `summaryArgumentCount` items (1 when 0), and the distinct `summaryArgument`s name them —
    /// through the category's `categorySummaryFormat` when all the rest share a category that has
    /// one (`%u` the count, `%@` the names), otherwise "5 more notifications from Alice and Bob"
    /// ("5 more notifications" when none has an argument).
    func text(formats: [String: String]) -> String {
        let listed = kept.prefix(ScheduledSummary.listedItems)
        var lines = listed.map { item in
            item.title.isEmpty ? item.body : item.body.isEmpty ? item.title : "\(item.title): \(item.body)"
        }
        let rest = kept.dropFirst(listed.count)
        let restItems = items - listed.reduce(0) { $0 + $1.items }
        if count > listed.count, restItems > 0 {
            var names: [String] = []
            for item in rest where !item.summaryArgument.isEmpty && !names.contains(item.summaryArgument) {
                names.append(item.summaryArgument)
            }
            let categories = Set(rest.map(\.category))
            let format = categories.count == 1 ? formats[categories.first!].flatMap { $0.isEmpty ? nil : $0 } : nil
            if let format, !SummaryFormat.usesArgument(format) || !names.isEmpty {
                lines.append(SummaryFormat.fill(format, count: restItems, names: SummaryFormat.list(names)))
            } else {
                let more = "\(restItems) more notification\(restItems == 1 ? "" : "s")"
                lines.append(names.isEmpty ? more : "\(more) from \(SummaryFormat.list(names))")
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// A category's `categorySummaryFormat`, filled as iOS fills it: `%u` (also `%d`, `%lu`, `%ld`
/// and positional `%1$u`) the count, `%@` (or `%2$@`) the summary arguments, `%%` a percent sign.
enum SummaryFormat {
    static func usesArgument(_ format: String) -> Bool { specifiers(format).contains { $0.kind == "@" } }

    static func fill(_ format: String, count: Int, names: String) -> String {
        var result = ""
        var index = format.startIndex
        for spec in specifiers(format) {
            result += format[index..<spec.range.lowerBound]
            switch spec.kind {
            case "%": result += "%"
            case "@": result += names
            default: result += String(count)
            }
            index = spec.range.upperBound
        }
        result += format[index...]
        return result
    }

    /// "Alice", "Alice and Bob", "Alice, Bob and Carol".
    static func list(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    private static func specifiers(_ format: String) -> [(range: Range<String.Index>, kind: Character)] {
        var found: [(range: Range<String.Index>, kind: Character)] = []
        var index = format.startIndex
        while let percent = format[index...].firstIndex(of: "%") {
            var cursor = format.index(after: percent)
            while cursor < format.endIndex, format[cursor].isASCII,
                format[cursor].isNumber || format[cursor] == "$" || format[cursor] == "l"
            {
                cursor = format.index(after: cursor)
            }
            guard cursor < format.endIndex else { break }
            let kind = format[cursor]
            if "%@udi".contains(kind) {
                found.append((percent..<format.index(after: cursor), kind == "d" || kind == "i" ? "u" : kind))
            }
            index = format.index(after: cursor)
        }
        return found
    }
}
