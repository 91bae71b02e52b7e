import Chime
import ChimeCore
import Foundation

/// Focus modes (Chime's addition, ``FocusMode``) in virtual time: a schedule starts and ends as
/// ``NotificationSimulator/advance(by:)`` passes its times (across daylight-saving changes), and
/// the summary of what a focus held is delivered when it ends.
///
/// ```swift
/// try await simulator.putFocusMode(FocusMode(name: "Sleep", schedule: FocusSchedule(
///     from: "22:00", to: "07:00", days: FocusDay.everyDay, timeZone: "Europe/Berlin")))
/// await simulator.advance(by: 86_400)
/// #expect(await simulator.deliveredNotifications.contains { $0.request.content.body == "3 notifications during Sleep" })
/// ```
extension NotificationSimulator {
    /// Adds or replaces a focus mode (the owner's, for every app).
    @discardableResult
    public func putFocusMode(_ mode: FocusMode) async throws -> FocusStatus {
        let status = try await engine.putFocusMode(mode)
        await center.processEvents()
        return status
    }

    /// Turns a focus mode on or off by hand (until its schedule's next start or end).
    @discardableResult
    public func setFocus(_ name: String, on: Bool) async throws -> FocusStatus {
        let status = try await engine.setFocus(named: name, on: on)
        await center.processEvents()
        return status
    }

    /// Removes a focus mode; what it held is summarized at once.
    @discardableResult
    public func removeFocusMode(_ name: String) async throws -> Bool {
        let removed = try await engine.removeFocusMode(named: name)
        await center.processEvents()
        return removed
    }

    /// The focus modes, with whether each is on now.
    public var focusModes: [FocusStatus] {
        get async throws { try await engine.focusModes() }
    }
}
