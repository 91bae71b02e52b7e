import Foundation

/// A named focus (quiet hours): while it is on, notifications are delivered quietly — in the
/// delivered list, with their badge, but with no banner, no sound, no desktop pop-up and no push —
/// except time-sensitive and critical ones and those it allows (by app, thread or
/// `filterCriteria`, as iOS's focus filters do). When it ends, each app whose notifications it held
/// gets one summary notification ("12 notifications during Sleep"). A Chime addition: iOS keeps
/// focus modes to the system; Chime's belong to the service's owner and apply to every app.
///
/// It is on by its ``schedule`` or by hand (``manual``): turned on or off by hand, it stays so
/// until the schedule's next start or end after that (then the schedule decides again); a focus
/// without a schedule stays as it was turned until it is turned again.
///
/// ```swift
/// let sleep = try FocusMode(name: "Sleep",
///                           schedule: FocusSchedule(from: "22:00", to: "07:00", days: FocusDay.weekdays,
///                                                   timeZone: "Europe/Berlin"),
///                           allowedApps: ["com.example.alarm"])
/// try await engine.putFocusMode(sleep)
/// ```
public struct FocusMode: Sendable, Hashable {
    /// 1 to 64 letters, digits, spaces, `.`, `-` or `_` (no space at either end): how the user and
    /// the summary call it.
    public var name: String
    /// When it is on by itself; `nil`: only by hand.
    public var schedule: FocusSchedule?
    /// Apps whose notifications it lets through (bundle identifiers).
    public var allowedApps: [String]
    /// Threads (``NotificationContent/threadIdentifier``) whose notifications it lets through.
    public var allowedThreads: [String]
    /// ``NotificationContent/filterCriteria`` values it lets through (iOS's focus filters).
    public var allowedFilterCriteria: [String]
    /// Turned on or off by hand, and when; `nil`: as the schedule says.
    public var manual: FocusOverride?

    public init(
        name: String, schedule: FocusSchedule? = nil, allowedApps: [String] = [], allowedThreads: [String] = [],
        allowedFilterCriteria: [String] = [], manual: FocusOverride? = nil
    ) throws(ChimeError) {
        self.name = name
        self.schedule = schedule
        self.allowedApps = allowedApps
        self.allowedThreads = allowedThreads
        self.allowedFilterCriteria = allowedFilterCriteria
        self.manual = manual
        try validate()
    }

    /// The most focus modes the service keeps.
    public static let maximumCount = 32
    /// The most entries of each allowed list.
    public static let maximumAllowed = 256

    /// Checks every field; the error names the one at fault and what is accepted.
    public func validate() throws(ChimeError) {
        try Self.validateName(name)
        typealias Field = JSONFieldName.Focus
        for (field, list) in [
            (Field.allowedApps, allowedApps), (Field.allowedThreads, allowedThreads),
            (Field.allowedFilterCriteria, allowedFilterCriteria),
        ] {
            if list.count > Self.maximumAllowed {
                throw ChimeError(
                    .invalidValue, field: field, "\(field) has \(list.count) entries; at most \(Self.maximumAllowed)")
            }
            for (index, entry) in list.enumerated() where entry.isEmpty || entry.utf8.count > 255 {
                throw ChimeError(
                    .invalidValue, field: "\(field)[\(index)]", "\(field)[\(index)] must be 1 to 255 bytes of text")
            }
        }
        for (index, app) in allowedApps.enumerated() {
            try Validation.validateBundleIdentifier(app, field: "\(Field.allowedApps)[\(index)]")
        }
    }

    /// Checks a focus name: 1 to 64 letters, digits, spaces, `.`, `-` or `_`, no space at either end.
    public static func validateName(_ name: String, field: String = JSONFieldName.Focus.name) throws(ChimeError) {
        let allowed =
            !name.isEmpty && name.count <= 64 && name.first != " " && name.last != " "
            && name.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) || " .-_".unicodeScalars.contains($0)
            }
        guard allowed else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field) \"\(name.prefix(80))\" is not a focus name; use 1 to 64 letters, digits, spaces, '.', '-' or '_', as Sleep or Do Not Disturb"
            )
        }
    }

    /// Whether it is on at `date`.
    public func isActive(at date: Date) -> Bool {
        if let manual, manual.holds(at: date, schedule: schedule) { return manual.isOn }
        return schedule?.contains(date) ?? false
    }

    /// The next date after `date` at which it may turn on or off (a start or end of its schedule;
    /// `nil` without one): the engine looks again then.
    public func nextChange(after date: Date) -> Date? { schedule?.nextEdge(after: date) }

    /// When it next turns off after `date`, while on at `date` (`nil`: not before it is turned off
    /// by hand). Looks through at most 64 starts and ends.
    public func end(after date: Date) -> Date? {
        var at = date
        for _ in 0..<64 {
            guard let next = nextChange(after: at) else { return nil }
            if !isActive(at: next) { return next }
            at = next
        }
        return nil
    }

    /// What it does to a notification about to be shown with `presentation`, while it is on: `nil`
    /// when it changes nothing (the notification was quiet anyway).
    func decision(
        for content: NotificationContent, app: String, settings: NotificationSettings,
        presentation: UNNotificationPresentationOptions
    ) -> FocusDecision? {
        guard presentation.contains(.banner) || presentation.contains(.sound) else { return nil }
        let reason: FocusDecision.Reason? =
            FocusDecision.Reason.breakingThrough(content, settings: settings)
            ?? (allowedApps.contains(app)
                ? .allowedApp
                : !content.threadIdentifier.isEmpty && allowedThreads.contains(content.threadIdentifier)
                    ? .allowedThread
                    : content.filterCriteria.map(allowedFilterCriteria.contains) == true
                        ? .allowedFilterCriteria
                        : nil)
        return FocusDecision(focus: name, quiet: reason == nil, reason: reason ?? .focus)
    }
}

/// A focus turned on or off by hand at `since`: it holds until the schedule's next start or end
/// after `since` (with no schedule, until turned again).
public struct FocusOverride: Sendable, Hashable {
    public var isOn: Bool
    public var since: Date

    public init(isOn: Bool, since: Date) {
        self.isOn = isOn
        self.since = since
    }

    /// Whether it still decides at `date`.
    public func holds(at date: Date, schedule: FocusSchedule?) -> Bool {
        guard date >= since else { return false }
        guard let schedule, let edge = schedule.nextEdge(after: since) else { return true }
        return date < edge
    }
}

/// A day of the week, as focus schedules name them.
public enum FocusDay: String, Sendable, Hashable, CaseIterable, Comparable {
    case mon, tue, wed, thu, fri, sat, sun

    /// Monday to Friday.
    public static let weekdays: Set<FocusDay> = [.mon, .tue, .wed, .thu, .fri]
    /// Every day.
    public static let everyDay = Set(allCases)

    /// 0 Monday … 6 Sunday (``CivilDays/weekday(days:)``).
    var index: Int { Self.allCases.firstIndex(of: self)! }

    public static func < (lhs: FocusDay, rhs: FocusDay) -> Bool { lhs.index < rhs.index }

    /// Parses `mon-fri`, `sat,sun`, `mon,wed-fri`, `daily`, `weekdays` or `weekends` (day names of
    /// three letters or whole, any case).
    public static func parseList(_ text: String, field: String = JSONFieldName.Focus.days) throws(ChimeError) -> Set<
        FocusDay
    > {
        let accepted =
            "accepted: day names (mon … sun) separated by commas, ranges such as mon-fri, daily, weekdays or weekends"
        var days: Set<FocusDay> = []
        for part in text.lowercased().split(separator: ",", omittingEmptySubsequences: false).map({
            $0.trimmingCharacters(in: .whitespaces)
        }) {
            switch part {
            case "daily", "everyday", "every day": days.formUnion(everyDay)
            case "weekdays": days.formUnion(weekdays)
            case "weekends": days.formUnion([.sat, .sun])
            default:
                let ends = part.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
                guard (1...2).contains(ends.count), let first = day(ends[0]), let last = day(ends[ends.count - 1])
                else {
                    throw ChimeError(
                        .invalidValue, field: field,
                        "\(field) \"\(text.prefix(80))\": \"\(part.prefix(40))\" is not a day or a range of days; \(accepted)"
                    )
                }
                // A range may wrap past Sunday (fri-mon).
                var index = first.index
                while true {
                    days.insert(allCases[index])
                    if index == last.index { break }
                    index = (index + 1) % 7
                }
            }
        }
        return days
    }

    /// A day by its three-letter or whole English name.
    public static func day(_ name: String) -> FocusDay? {
        let lower = name.lowercased()
        return allCases.first { lower == $0.rawValue || (lower.count > 3 && $0.wholeName.hasPrefix(lower)) }
    }

    private var wholeName: String {
        switch self {
        case .mon: "monday"
        case .tue: "tuesday"
        case .wed: "wednesday"
        case .thu: "thursday"
        case .fri: "friday"
        case .sat: "saturday"
        case .sun: "sunday"
        }
    }
}

/// When a focus is on by itself: from a wall time to another in a named time zone, starting on
/// the days listed. A `to` at or before `from` ends the next day (22:00 to 07:00 spans midnight;
/// the days are the evenings it starts). Wall times follow the zone's clock: a start or end that a
/// daylight-saving change skips moves forward by the gap; one that occurs twice is its first pass.
public struct FocusSchedule: Sendable, Hashable {
    /// Minutes after midnight, 0 ..< 1440.
    public var from: Int
    /// Minutes after midnight, 0 ..< 1440; not `from`.
    public var to: Int
    /// The days it starts on (at least one).
    public var days: Set<FocusDay>
    /// An IANA time zone identifier, as `Europe/Berlin`.
    public var timeZone: String

    /// A schedule from `from` to `to` (`HH:MM`, 24-hour) on `days` in `timeZone`.
    public init(from: String, to: String, days: Set<FocusDay>, timeZone: String) throws(ChimeError) {
        try self.init(
            fromMinute: Self.minutes(from, field: "schedule.from"), toMinute: Self.minutes(to, field: "schedule.to"),
            days: days, timeZone: timeZone)
    }

    public init(fromMinute: Int, toMinute: Int, days: Set<FocusDay>, timeZone: String) throws(ChimeError) {
        for (field, value) in [("schedule.from", fromMinute), ("schedule.to", toMinute)]
        where !(0..<1440).contains(value) {
            throw ChimeError(
                .invalidValue, field: field, "\(field) is minute \(value) of the day; accepted: 00:00 to 23:59")
        }
        guard fromMinute != toMinute else {
            throw ChimeError(
                .invalidValue, field: "schedule.to",
                "schedule.to is schedule.from (\(Self.text(fromMinute))): a focus must end; for a whole day use 00:00 to 23:59, or turn it on by hand"
            )
        }
        guard !days.isEmpty else {
            throw ChimeError(
                .invalidValue, field: "schedule.days", "schedule.days is empty; list at least one day (mon … sun)")
        }
        guard TimeZone(identifier: timeZone) != nil else {
            throw ChimeError(
                .invalidValue, field: "schedule.timeZone",
                "schedule.timeZone \"\(timeZone.prefix(80))\" is not a known time zone; use an IANA name such as Europe/Berlin or UTC"
            )
        }
        from = fromMinute
        to = toMinute
        self.days = days
        self.timeZone = timeZone
    }

    /// `HH:MM` (24-hour, one or two digits for the hour) as minutes after midnight.
    public static func minutes(_ text: String, field: String) throws(ChimeError) -> Int {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute),
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) })
        else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field) \"\(text.prefix(40))\" is not a time of day; accepted: HH:MM, 00:00 to 23:59, as 22:00")
        }
        return hour * 60 + minute
    }

    /// Minutes after midnight as `HH:MM`.
    public static func text(_ minutes: Int) -> String {
        let hour = minutes / 60
        let minute = minutes % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }

    public var fromText: String { Self.text(from) }
    public var toText: String { Self.text(to) }

    private var zone: TimeZone { TimeZone(identifier: timeZone) ?? TimeZone(secondsFromGMT: 0)! }

    /// The periods that start on the days from `day - 2` to `day + 8` (days counted from
    /// 1970-01-01 in the zone), in order.
    private func periods(around day: Int) -> [(start: Date, end: Date)] {
        let zone = self.zone
        var result: [(start: Date, end: Date)] = []
        for startDay in (day - 2)...(day + 8) where days.contains(FocusDay.allCases[CivilDays.weekday(days: startDay)])
        {
            let endDay = to > from ? startDay : startDay + 1
            guard let start = Self.instant(day: startDay, minute: from, zone: zone),
                let end = Self.instant(day: endDay, minute: to, zone: zone), end > start
            else { continue }
            result.append((start, end))
        }
        return result
    }

    private static func instant(day: Int, minute: Int, zone: TimeZone) -> Date? {
        let date = CivilDays.date(days: day)
        return RecurrenceSchedule.instant(
            ofWallTime: DateComponents(
                year: date.year, month: date.month, day: date.day,
                hour: minute / 60, minute: minute % 60), in: zone)
    }

    /// The day (from 1970-01-01) of `date` on the zone's clock.
    private func localDay(_ date: Date) -> Int {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: date)
        return seconds.floorDivided(by: 86_400)
    }

    /// Whether a period holds `date` (its start included, its end not).
    public func contains(_ date: Date) -> Bool {
        periods(around: localDay(date)).contains { $0.start <= date && date < $0.end }
    }

    /// The first start or end strictly after `date`.
    public func nextEdge(after date: Date) -> Date? {
        var day = localDay(date)
        // Every start day is within a week: two windows of eleven days always find one.
        for _ in 0..<2 {
            let edges = periods(around: day).flatMap { [$0.start, $0.end] }.filter { $0 > date }
            if let first = edges.min() { return first }
            day += 7
        }
        return nil
    }
}

/// What an active focus did to one notification, as its delivery (``Delivery/focus``) and event
/// streams say: held quietly by the focus, or let through and why.
public struct FocusDecision: Sendable, Hashable {
    /// Why a notification was held or let through.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// Held: no banner, no sound, no pop-up or push.
        case focus
        /// Let through: time-sensitive (the app's ``NotificationSettings/timeSensitiveSetting`` is enabled).
        case timeSensitive
        /// Let through: critical.
        case critical
        /// Let through: its app is allowed.
        case allowedApp
        /// Let through: its thread is allowed.
        case allowedThread
        /// Let through: its `filterCriteria` is allowed.
        case allowedFilterCriteria
        /// Held for its app's scheduled summary (``ScheduledSummary``; the decision's focus is
        /// ``FocusDecision/scheduledSummaryName``): no banner, no sound, no pop-up or push.
        case scheduledSummary

        /// What lets a notification through every hold, a focus's or a scheduled summary's, by its
        /// interruption level alone: `.critical` (critical, with critical alerts or time-sensitive
        /// notifications enabled), `.timeSensitive` (time-sensitive, enabled), else `nil`.
        static func breakingThrough(_ content: NotificationContent, settings: NotificationSettings) -> Reason? {
            switch content.interruptionLevel {
            case .critical where settings.criticalAlertSetting == .enabled || settings.timeSensitiveSetting == .enabled:
                .critical
            case .timeSensitive where settings.timeSensitiveSetting == .enabled: .timeSensitive
            default: nil
            }
        }
    }

    /// The focus's name.
    public var focus: String
    /// Whether it was held (delivered quietly).
    public var quiet: Bool
    public var reason: Reason

    public init(focus: String, quiet: Bool, reason: Reason) {
        self.focus = focus
        self.quiet = quiet
        self.reason = reason
    }
}

/// A focus mode as the engine answers it: with whether it is on now, until when, and how many
/// notifications it has held so far in this spell.
public struct FocusStatus: Sendable, Hashable {
    public var mode: FocusMode
    /// Whether it is on now.
    public var isActive: Bool
    /// When it next turns on or off by its schedule (or a manual setting ends); `nil`: not by itself.
    public var nextChange: Date?
    /// Notifications held so far in the current spell, by app.
    public var held: [String: Int]
    /// Whether a setting by hand (``FocusMode/manual``) decides now, rather than the schedule:
    /// turned on or off by hand, until ``nextChange``.
    public var byHand: Bool

    public init(mode: FocusMode, isActive: Bool, nextChange: Date?, held: [String: Int], byHand: Bool = false) {
        self.mode = mode
        self.isActive = isActive
        self.nextChange = nextChange
        self.held = held
        self.byHand = byHand
    }
}
