import Foundation

/// Focus modes (``FocusMode``; a Chime addition): the owner's quiet hours, for every app.
///
/// ```swift
/// let sleep = try FocusMode(name: "Sleep", schedule: FocusSchedule(from: "22:00", to: "07:00",
///                                                                  days: FocusDay.weekdays, timeZone: "Europe/Berlin"))
/// _ = try await engine.putFocusMode(sleep)
/// _ = try await engine.setFocus(named: "Sleep", on: true)     // now, until 07:00
/// for status in try await engine.focusModes() { print(status.mode.name, status.isActive) }
/// ```
extension NotificationEngine {
    /// Every focus mode, by name, with whether it is on now, its next change and what it held so
    /// far in its current spell.
    public func focusModes() async throws -> [FocusStatus] {
        try await perform { try $0.focusStatuses() }
    }

    /// The focus mode of this name, or `nil`.
    public func focusMode(named name: String) async throws -> FocusStatus? {
        try await focusModes().first { $0.mode.name == name }
    }

    /// Adds a focus mode, or replaces the one of its name (how it was turned by hand stays). A
    /// spell the change ends is summarized at once.
    /// - Throws: ``ChimeError`` naming the field at fault; `tooLarge` past
    ///   ``FocusMode/maximumCount`` modes.
    @discardableResult
    public func putFocusMode(_ mode: FocusMode) async throws -> FocusStatus {
        try mode.validate()
        return try await perform { try $0.putFocusMode(mode) }
    }

    /// Removes a focus mode; what it held is summarized at once.
    /// - Returns: whether there was one of this name.
    @discardableResult
    public func removeFocusMode(named name: String) async throws -> Bool {
        try await perform { try $0.removeFocusMode(named: name) }
    }

    /// Turns a focus mode on or off by hand: it stays so until its schedule's next start or end
    /// (without a schedule, until turned again). Turned off, what it held is summarized at once.
    /// - Throws: ``ChimeError`` `notFound` when there is no mode of this name.
    @discardableResult
    public func setFocus(named name: String, on: Bool) async throws -> FocusStatus {
        try await perform { try $0.setFocus(named: name, on: on) }
    }
}
