import Foundation

/// The engine's focus modes (``FocusMode``), as it holds them between transactions.
struct FocusState {
    /// Every mode, by name.
    var modes: [FocusMode] = []
    /// When the engine next looks at its modes — a start or end of a schedule, or at once after
    /// they were loaded — to deliver the summary of a spell that ended. `nil`: no mode changes by
    /// itself.
    var checkAt: Date?
    /// The modes on from `activeFrom` until `checkAt`, as found by the last look.
    var active: [FocusMode] = []
    var activeFrom: Date?
    /// While a summary is delivered (it is not held).
    var summarizing = false
    /// The names of the modes on as the last `focus` event told (`nil`: none told yet).
    var announcedActive: Set<String>?
    /// The modes changed (here or, reloaded, on another engine) since the last `focus` event.
    var changed = false
}

/// Focus modes in the engine: stored in the key/value table (`device.focus.modes`, so a shared
/// store's other engines reload them; each spell's held counts under `focus.session.NAME`), applied
/// to each delivery and re-alert, and their ends found on the scheduler's own schedule (the next
/// start or end is one of the dates it wakes for: no polling).
extension EngineCore {
    static let focusKey = "device.focus.modes"

    /// Reads the modes (device state: at open, after a rollback, and when another engine changed
    /// them); the engine looks at them at once, so a spell that ended while it was down is
    /// summarized at its first firing.
    /// A reload tells subscribers of the modes at that look (`focus` event), as another engine may
    /// have changed them.
    func loadFocus() {
        guard case .success(let text) = Result(catching: { try store.value(forKey: Self.focusKey) }) else { return }
        let hadModes = !focus.modes.isEmpty
        focus.modes = FocusMode.stored(text)
        focus.activeFrom = nil
        focus.changed = true
        focus.checkAt = focus.modes.isEmpty && !hadModes ? nil : .distantPast
    }

    private func saveFocus() throws {
        try store.setValue(focus.modes.isEmpty ? nil : FocusMode.stored(focus.modes), forKey: Self.focusKey)
        focus.activeFrom = nil
    }

    /// The modes on at `date`.
    private func activeFocusModes(at date: Date) -> [FocusMode] {
        if let from = focus.activeFrom, date >= from, date < (focus.checkAt ?? .distantFuture) { return focus.active }
        return focus.modes.filter { $0.isActive(at: date) }
    }

    /// What the modes on now do to a delivery about to be announced: a held one loses its banner
    /// and sound (it stays in the list, with its badge) and says which focus held it; one let
    /// through says why. `counting`: a held delivery counts toward its focus's summary (a
    /// re-alert does not).
    func applyFocus(_ delivery: inout Delivery, app: String, counting: Bool) throws {
        guard !focus.modes.isEmpty, !focus.summarizing else { return }
        let now = clock.now
        var through: FocusDecision?
        for mode in activeFocusModes(at: now) {
            guard
                let decision = mode.decision(
                    for: delivery.notification.request.content, app: app, settings: delivery.settings,
                    presentation: delivery.presentation)
            else { return }
            guard decision.quiet else {
                if through == nil { through = decision }
                continue
            }
            delivery.focus = decision
            delivery.presentation.subtract([.banner, .sound])
            if counting { try countHeld(app: app, by: mode, now: now) }
            return
        }
        delivery.focus = through
    }

    /// One more notification of `app` held in `mode`'s spell. With a shared store the session's row
    /// is locked first, so counts and the summary's take never cross.
    private func countHeld(app: String, by mode: FocusMode, now: Date) throws {
        let key = FocusSession.key(mode.name)
        let fresh = FocusSession(until: nil).serialized
        let text = shared != nil ? try store.insertValue(fresh, forKey: key) : try store.value(forKey: key)
        var session = FocusSession(stored: text ?? fresh)
        session.count(app: app)
        session.until = mode.end(after: now)
        try store.setValue(session.serialized, forKey: key)
    }

    /// At a start or end of a schedule (or at once after loading): each spell that ended is
    /// summarized, in this transaction, once — its session is taken from the store (a shared
    /// store's other engines find it gone) — and the next look is set. Part of each firing. When
    /// the modes changed or another one is on now, a `focus` event tells the owner's subscribers
    /// (after the summaries' deliveries).
    func focusDue(now: Date) throws {
        guard let checkAt = focus.checkAt, now >= checkAt else { return }
        focus.checkAt = nil
        for mode in focus.modes { try endSpellIfOver(mode, now: now) }
        focus.checkAt = focus.modes.compactMap { $0.nextChange(after: now) }.min()
        focus.active = focus.modes.filter { $0.isActive(at: now) }
        focus.activeFrom = now
        let names = Set(focus.active.map(\.name))
        if focus.changed || names != focus.announcedActive {
            announce(.focus(try focusStatuses()), app: "")
            focus.announcedActive = names
            focus.changed = false
        }
    }

    /// Summarizes `mode`'s spell when it is over at `now` (the focus is off, or on again after an
    /// end that passed while nothing ran).
    private func endSpellIfOver(_ mode: FocusMode, now: Date) throws {
        let key = FocusSession.key(mode.name)
        if mode.isActive(at: now) {
            guard let text = try store.value(forKey: key), let until = FocusSession(stored: text).until, until <= now
            else { return }
        }
        guard let text = try store.takeValue(forKey: key) else { return }
        try summarize(FocusSession(stored: text), focus: mode.name, now: now)
    }

    /// Delivers, to each app with notifications held, one notification saying how many ("12
    /// notifications during Sleep"), presented as usual (no focus holds it). It replaces the
    /// app's previous summary of this focus (identifier `chime.focus.NAME`); an app that is gone
    /// or no longer allowed to notify gets none.
    private func summarize(_ session: FocusSession, focus name: String, now: Date) throws {
        focus.summarizing = true
        defer { focus.summarizing = false }
        for (app, count) in session.held where count > 0 {
            guard let record = try store.app(app), record.settings.authorizationStatus.allowsDelivery else { continue }
            var content = NotificationContent(
                title: name, body: "\(count) notification\(count == 1 ? "" : "s") during \(name)")
            content.threadIdentifier = "chime.focus"
            content.userInfo = ["chime.focus": .string(name), "chime.held": .integer(Int64(count))]
            _ = try deliver(
                NotificationRequest(identifier: "chime.focus.\(name)", content: content), app: app, date: now)
        }
    }

    // MARK: Operations

    /// Every mode with whether it is on now, its next change and what it held so far.
    func focusStatuses() throws -> [FocusStatus] {
        let now = clock.now
        return try focus.modes.map { mode in
            let held =
                try store.value(forKey: FocusSession.key(mode.name)).map { FocusSession(stored: $0).dictionary } ?? [:]
            let active = mode.isActive(at: now)
            let next = active ? mode.end(after: now) : mode.nextChange(after: now)
            let byHand = mode.manual?.holds(at: now, schedule: mode.schedule) ?? false
            return FocusStatus(mode: mode, isActive: active, nextChange: next, held: held, byHand: byHand)
        }
    }

    /// Adds a mode or replaces the one of its name (keeping how it was turned by hand); a spell
    /// the change ends is summarized now.
    func putFocusMode(_ mode: FocusMode) throws -> FocusStatus {
        try mode.validate()
        var mode = mode
        if let index = focus.modes.firstIndex(where: { $0.name == mode.name }) {
            mode.manual = focus.modes[index].manual
            focus.modes[index] = mode
        } else {
            guard focus.modes.count < FocusMode.maximumCount else {
                throw ChimeError(
                    .tooLarge, field: "name",
                    "there are \(focus.modes.count) focus modes, the most the service keeps; remove one before adding \(mode.name)"
                )
            }
            focus.modes.append(mode)
            focus.modes.sort { $0.name < $1.name }
        }
        try focusChanged()
        return try status(of: mode.name)
    }

    /// Removes a mode; what it held is summarized now. `false`: there was none of this name.
    func removeFocusMode(named name: String) throws -> Bool {
        guard let index = focus.modes.firstIndex(where: { $0.name == name }) else { return false }
        focus.modes.remove(at: index)
        try saveFocus()
        if let text = try store.takeValue(forKey: FocusSession.key(name)) {
            try summarize(FocusSession(stored: text), focus: name, now: clock.now)
        }
        try focusChanged(saved: true)
        return true
    }

    /// Turns a mode on or off by hand, until its schedule's next start or end (see
    /// ``FocusOverride``); turned off, what it held is summarized now.
    func setFocus(named name: String, on: Bool) throws -> FocusStatus {
        guard let index = focus.modes.firstIndex(where: { $0.name == name }) else { throw Self.noFocus(name) }
        focus.modes[index].manual = FocusOverride(isOn: on, since: clock.now)
        try focusChanged()
        return try status(of: name)
    }

    private func status(of name: String) throws -> FocusStatus {
        guard let status = try focusStatuses().first(where: { $0.mode.name == name }) else { throw Self.noFocus(name) }
        return status
    }

    /// Stores the modes and looks at them at once: a spell the change ended is summarized in this
    /// transaction, the scheduler's next look moves, and a `focus` event tells of the change.
    private func focusChanged(saved: Bool = false) throws {
        if !saved { try saveFocus() }
        focus.changed = true
        focus.checkAt = clock.now
        try focusDue(now: clock.now)
    }

    static func noFocus(_ name: String) -> ChimeError {
        ChimeError(
            .notFound, field: "name", "there is no focus mode named \"\(name.prefix(80))\"; chime focus list shows them"
        )
    }
}
