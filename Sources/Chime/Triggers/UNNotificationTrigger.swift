import ChimeCore
import Foundation

/// What makes a notification fire. Use a subclass.
open class UNNotificationTrigger: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable after init.
    let value: NotificationTrigger
    /// When Chime will fire the request, for a trigger read back from
    /// `pendingNotificationRequests()` (`nil` for a trigger the app made, and for location and push
    /// triggers). `nextTriggerDate()` answers as iOS does, which for a time-interval trigger is
    /// "now plus the interval" whenever it is asked. (A Chime addition.)
    ///
    /// ```swift
    /// let soonest = await center.pendingNotificationRequests().compactMap { $0.trigger?.scheduledDate }.min()
    /// ```
    public let scheduledDate: Date?

    init(value: NotificationTrigger, scheduledDate: Date?) {
        self.value = value
        self.scheduledDate = scheduledDate
    }

    /// Whether the trigger fires again after it fires.
    public var repeats: Bool { value.repeats }

    static func make(_ value: NotificationTrigger?, scheduledDate: Date? = nil) -> UNNotificationTrigger? {
        switch value {
        case nil: nil
        case .timeInterval?: UNTimeIntervalNotificationTrigger(value: value!, scheduledDate: scheduledDate)
        case .calendar?: UNCalendarNotificationTrigger(value: value!, scheduledDate: scheduledDate)
        case .location(let region, _)?:
            UNLocationNotificationTrigger(value: value!, region: CLCircularRegion(value: region))
        case .recurrence?: UNRecurrenceNotificationTrigger(value: value!, scheduledDate: scheduledDate)
        case .push?: UNPushNotificationTrigger(value: .push, scheduledDate: nil)
        }
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationTrigger)?.value == value }
    open override var hash: Int { value.hashValue }
}

/// Fires after a number of seconds, once or repeatedly.
///
/// ```swift
/// let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false)
/// ```
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    /// Makes the trigger. As on Apple's platforms, an interval of 0 or less, or under 60 when
    /// repeating, is a programming error and stops the program (use the JSON/HTTP API for input
    /// that should be checked instead).
    public convenience init(timeInterval: TimeInterval, repeats: Bool) {
        precondition(timeInterval > 0, "time interval must be greater than 0")
        precondition(!repeats || timeInterval >= 60, "time interval must be at least 60 if repeating")
        self.init(value: .timeInterval(timeInterval, repeats: repeats), scheduledDate: nil)
    }

    public var timeInterval: TimeInterval {
        if case .timeInterval(let interval, _) = value { return interval }
        return 0
    }

    /// Now plus the interval, as iOS answers, also for a trigger read back from a pending request
    /// (which fires when it was added plus the interval: that date is ``scheduledDate``). "Now" is
    /// the current center's (the simulator's virtual clock in a test).
    open func nextTriggerDate() -> Date? {
        ChimeEnvironment.now().addingTimeInterval(timeInterval)
    }

    open override var description: String {
        "<UNTimeIntervalNotificationTrigger timeInterval: \(timeInterval), repeats: \(repeats)>"
    }
}

/// Fires at the next date matching some date components, once or every time they match.
///
/// ```swift
/// var morning = DateComponents()
/// morning.hour = 8
/// morning.minute = 30
/// let trigger = UNCalendarNotificationTrigger(dateMatching: morning, repeats: true)
/// ```
open class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public convenience init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.init(value: .calendar(dateComponents, repeats: repeats), scheduledDate: nil)
    }

    public var dateComponents: DateComponents {
        if case .calendar(let components, _) = value { return components }
        return DateComponents()
    }

    /// The next matching date after the current center's "now", in its time zone (or the
    /// components' own).
    open func nextTriggerDate() -> Date? {
        FireDates.nextCalendarDate(
            matching: dateComponents, after: ChimeEnvironment.now(), timeZone: ChimeEnvironment.timeZone())
    }

    open override var description: String {
        "<UNCalendarNotificationTrigger dateComponents: \(FireDates.describe(dateComponents)), repeats: \(repeats)>"
    }
}

/// Fires when the device enters or leaves a region.
///
/// ```swift
/// let trigger = UNLocationNotificationTrigger(region: office, repeats: false)
/// ```
open class UNLocationNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public let region: CLRegion

    init(value: NotificationTrigger, region: CLRegion) {
        self.region = region
        super.init(value: value, scheduledDate: nil)
    }

    public convenience init(region: CLRegion, repeats: Bool) {
        let circle =
            (region as? CLCircularRegion)?.value
            ?? CircularRegion(
                identifier: region.identifier, center: Coordinate(latitude: 0, longitude: 0), radius: 0,
                notifyOnEntry: region.notifyOnEntry, notifyOnExit: region.notifyOnExit)
        self.init(value: .location(circle, repeats: repeats), region: region)
    }

    open override var description: String {
        "<UNLocationNotificationTrigger region: \(region.identifier), repeats: \(repeats)>"
    }
}

/// The trigger of a remote (APNs-format) notification. Apps do not make these.
open class UNPushNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {}
