import ChimeCore
import Foundation
import Synchronization

/// The app's notification center: authorization, categories, scheduling, delivered notifications
/// and the user's answers.
///
/// ```swift
/// let center = UNUserNotificationCenter.current()
/// center.delegate = handler
/// guard try await center.requestAuthorization(options: [.alert, .sound, .badge]) else { return }
/// let content = UNMutableNotificationContent()
/// content.title = "Alarm"
/// content.sound = .default
/// try await center.add(UNNotificationRequest(identifier: "Alarm", content: content,
///                                            trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false)))
/// ```
///
/// Callable from any thread. Operations are processed one at a time in the order they were called
/// (a remove called before an add of the same identifier happens first), and each completes after
/// its change is committed to the store.
///
/// `@unchecked Sendable` (an `NSObject`): its mutable state is behind a `Mutex` (the delegate under
/// its lock too), `subscription`
/// and `liveContinuation` are written in `init` only, and the engine is thread-safe.
public final class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    /// What does the work: the engine in this process, or a `chime serve` service.
    package let backend: any CenterBackend
    /// The engine in this process (the simulator's centers always have one).
    package var engine: NotificationEngine {
        guard let engine = backend as? NotificationEngine else {
            preconditionFailure("this center is connected to a Chime service; it has no engine in this process")
        }
        return engine
    }
    /// The app this center speaks for.
    public let bundleIdentifier: String
    /// The app's ``UIApplication``, made on first use.
    package var application: UIApplication {
        state.withLock { state in
            if let made = state.application { return made }
            let made = UIApplication(center: self)
            state.application = made
            return made
        }
    }
    /// Whether the center processes engine events itself (an app running on the real clock) or
    /// leaves that to a driver (the simulator).
    package let isDriven: Bool

    /// What the center changes after it is made.
    private struct State {
        var application: UIApplication?
        var foreground: Bool
        /// Responses waiting for a driver's ``processEvents()``.
        var buffered: [NotificationResponse] = []
        var inFlight: Set<Int64> = []
        /// Who waits in ``handleWaitingResponses()`` for the answers in flight to be handled.
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var handled: Set<Int64> = []
        var attachments: [NotificationHub.Attachment] = []
        var timeZone: TimeZone
        var extensionType: ExtensionType?
        var extensionTimeLimit: TimeInterval = 30
        /// The last sweep of the attachment store started (a live center's sweeps run one after another).
        var sweepChain: Task<Void, Never>?
    }

    private let state: Mutex<State>
    /// The app's object, not Sendable by type (as on Apple's platforms), so outside `State`: read
    /// and written only inside `state.withLock`.
    private weak var _delegate: (any UNUserNotificationCenterDelegate)?
    private var subscription: Int?
    private var liveContinuation: AsyncStream<NotificationResponse>.Continuation?
    private let callbackQueue = DispatchQueue(label: "chime.callbacks")
    /// How many completion handlers were handed to `callbackQueue` (the simulator waits for them).
    private let callbacksIssued = Atomic<Int>(0)
    /// Where `add` moves the app's attachment files.
    let attachmentStore: AttachmentStore

    /// Makes a center for an app over an engine.
    ///
    /// - Parameters:
    ///   - driven: `false` (an app on the real clock): the center starts the engine's scheduler and
    ///     presents and hands over events itself. `true`: a driver (the simulator) calls
    ///     ``processEvents()``.
    ///   - foreground: whether the app starts in front (then `willPresent` decides presentation).
    ///   - attachmentDirectory: where `add` moves the app's attachment files (the app's directory
    ///     in the data directory); `nil`: a temporary directory, removed with the center.
    package convenience init(
        engine: NotificationEngine, bundleIdentifier: String, timeZone: TimeZone, driven: Bool, foreground: Bool,
        attachmentDirectory: URL? = nil
    ) {
        self.init(
            backend: engine, bundleIdentifier: bundleIdentifier, timeZone: timeZone, driven: driven,
            foreground: foreground,
            attachmentDirectory: attachmentDirectory)
    }

    /// Makes a center over any backend (see ``init(engine:bundleIdentifier:timeZone:driven:foreground:attachmentDirectory:)``).
    package init(
        backend: any CenterBackend, bundleIdentifier: String, timeZone: TimeZone, driven: Bool, foreground: Bool,
        attachmentDirectory: URL? = nil
    ) {
        self.backend = backend
        self.bundleIdentifier = bundleIdentifier
        self.isDriven = driven
        state = Mutex(State(foreground: foreground, timeZone: timeZone))
        attachmentStore =
            attachmentDirectory.map { AttachmentStore(directory: $0) } ?? .temporary(app: bundleIdentifier)
        super.init()
        // The center hands the app its answers; the hub shows its notifications on the surfaces,
        // asking `willPresent` (``presenter``) while the app is in front.
        if driven {
            subscription = backend.hub.subscribe(app: bundleIdentifier) { [weak self] event in
                guard let self else { return }
                if Self.mayFreeAttachments(event) { self.attachmentStore.markDirty() }
                guard let response = event.response else { return }
                self.state.withLock { $0.buffered.append(response) }
            }
        } else {
            let (stream, continuation) = AsyncStream<NotificationResponse>.makeStream()
            liveContinuation = continuation
            subscription = backend.hub.subscribe(app: bundleIdentifier) { [weak self] event in
                if Self.mayFreeAttachments(event) { self?.attachmentsChanged() }
                if let response = event.response { continuation.yield(response) }
            }
            Task.detached { [weak self] in
                await self?.drainOutbox()
                for await response in stream {
                    guard let self else { return }
                    await self.handOver(response)
                }
            }
            backend.foregroundChanged(foreground, app: bundleIdentifier)
            backend.start(app: bundleIdentifier)
            attachmentsChanged()  // what an earlier run left behind
        }
        if foreground { backend.hub.setPresenter(app: bundleIdentifier, presenter) }
    }

    deinit {
        if let subscription { backend.hub.unsubscribe(subscription) }
        backend.hub.setPresenter(app: bundleIdentifier, nil)
        for attachment in state.withLock({ $0.attachments }) { attachment.detach() }
        liveContinuation?.finish()
        if !isDriven { backend.stop(app: bundleIdentifier) }
    }

    /// The app's `willPresent`, as the hub asks it for its deliveries while the app is in front:
    /// the delegate's answer, or nothing shown when there is no delegate (as on iOS). A burst of
    /// deliveries is one trip to the main actor; the delegate is still called once per
    /// notification, in order.
    private var presenter: NotificationHub.Presenter {
        { [weak self] deliveries in
            guard let self else { return deliveries.map { _ in nil } }
            let shown = deliveries.map { UNNotification(value: $0.notification) }
            let answers = await UNUserNotificationCenter.$scoped.withValue(self) { await self.askWillPresent(shown) }
            // A service waits for these answers too (its surfaces and the badge follow them).
            for (delivery, answer) in zip(deliveries, answers) {
                self.backend.reportPresentation(
                    answer ?? [], for: delivery.notification.request.identifier, app: self.bundleIdentifier)
            }
            return answers
        }
    }

    // MARK: - The current center

    /// The default center, once `current()` has made it.
    private static let installed = Mutex<UNUserNotificationCenter?>(nil)

    /// The center a delegate callback or completion handler runs for, so `current()` inside a
    /// callback (and in the tasks it starts) finds its center.
    @TaskLocal static var scoped: UNUserNotificationCenter?

    /// What test support answers when asked which center `current()` means where it is called.
    package enum Lookup: Sendable {
        /// This center (the calling test's simulator).
        case center(UNUserNotificationCenter)
        /// No one center can be meant here; the message says why and how to fix it.
        case ambiguous(String)
        /// Nothing is installed for this caller: the default center.
        case none
    }

    private static let lookup = Mutex<(@Sendable () -> Lookup)?>(nil)

    /// Lets test support (`ChimeTesting`) say which center `current()` returns: each test's own
    /// simulator. Set once, by the first simulator made.
    package static func setLookup(_ body: @escaping @Sendable () -> Lookup) {
        lookup.withLock { $0 = body }
    }

    /// The app's notification center.
    ///
    /// By default it keeps its state in a SQLite file and fires on the real clock:
    /// - the app is `CHIME_BUNDLE_IDENTIFIER`, else `Bundle.main.bundleIdentifier`, else the
    ///   executable's name;
    /// - the store is `CHIME_STORE`, else `$XDG_DATA_HOME/chime/<bundle identifier>.sqlite`
    ///   (`~/.local/share/chime/…`);
    /// - `requestAuthorization` is answered by `CHIME_AUTHORIZATION`: `allow` (the default) or `deny`.
    ///
    /// In a test, a simulator's `install()` (or the `.notificationSimulator` trait) makes it that
    /// test's simulator, also in the tasks the test starts and in callbacks (see `ChimeTesting`).
    public class func current() -> UNUserNotificationCenter {
        if let center = bound() { return center }
        return installed.withLock { installed in
            if let installed { return installed }
            let center = EmbeddedCenter.make()
            installed = center
            return center
        }
    }

    /// The center `current()` means here without making the default one: the center calling
    /// back, the test's simulator, or the default center if it exists.
    ///
    /// Stops the program when test support cannot tell which test's simulator is meant: returning
    /// either would silently mix one test's notifications into another's.
    static func bound() -> UNUserNotificationCenter? {
        if let scoped { return scoped }
        if let lookup = lookup.withLock({ $0 }) {
            switch lookup() {
            case .center(let center): return center
            case .ambiguous(let message): fatalError(message)
            case .none: break
            }
        }
        return nil
    }

    /// The default center, if `current()` has made it.
    static var defaultCenter: UNUserNotificationCenter? { installed.withLock { $0 } }

    // MARK: - Delegate and state

    /// The delegate; held weakly. Setting it hands over answers waiting in the outbox.
    public weak var delegate: (any UNUserNotificationCenterDelegate)? {
        get { state.withLock { _ in _delegate } }
        set {
            state.withLock { _ in _delegate = newValue }
            if newValue != nil && !isDriven {
                Task.detached { [weak self] in await self?.drainOutbox() }
            }
        }
    }

    /// Whether the app is in front: then `willPresent` decides how a notification is shown.
    /// (A Chime addition; iOS knows this by itself.)
    public var isAppInForeground: Bool {
        get { state.withLock { $0.foreground } }
        set {
            let changed = state.withLock { state -> Bool in
                defer { state.foreground = newValue }
                return state.foreground != newValue
            }
            if changed {
                backend.hub.setPresenter(app: bundleIdentifier, newValue ? presenter : nil)
                backend.foregroundChanged(newValue, app: bundleIdentifier)
            }
        }
    }

    /// Whether the center shows notifications in content extensions. Always `false` on Linux.
    public var supportsContentExtensions: Bool { false }

    /// The app's notification service extension: the class iOS names in the extension's
    /// `Info.plist` (`NSExtensionPrincipalClass`). Remote notifications with `mutable-content: 1`
    /// and an alert go through a new instance of it before they are delivered — pushed to the
    /// embedded center (``deliverRemoteNotification(_:identifier:)``), to the simulator
    /// (`push`), or to a `chime serve` service the app is connected to (while the app runs; when it
    /// does not, the service delivers the original content). `nil` (the default): none.
    /// (A Chime addition.)
    ///
    /// ```swift
    /// UNUserNotificationCenter.current().notificationServiceExtension = NotificationService.self
    /// ```
    public var notificationServiceExtension: UNNotificationServiceExtension.Type? {
        get { state.withLock { $0.extensionType?.type } }
        set {
            state.withLock { $0.extensionType = newValue.map(ExtensionType.init) }
            backend.serviceExtensionChanged(newValue == nil ? nil : serviceExtensionHandler, app: bundleIdentifier)
        }
    }

    /// How long the service extension has to call its content handler before
    /// `serviceExtensionTimeWillExpire()`: 30 s by default, as on iOS (virtual seconds under the
    /// simulator). (A Chime addition.)
    public var serviceExtensionTimeLimit: TimeInterval {
        get { state.withLock { $0.extensionTimeLimit } }
        set { state.withLock { $0.extensionTimeLimit = max(0, newValue) } }
    }

    /// Starts the app's service extension on a notification, if the app has one.
    package func startServiceExtension(for request: NotificationRequest, limit: TimeInterval? = nil)
        -> ServiceExtensionRun?
    {
        let (type, ownLimit) = state.withLock { ($0.extensionType?.type, $0.extensionTimeLimit) }
        guard let type else { return nil }
        return ServiceExtensionRun(
            extension: type, request: request, timeLimit: min(ownLimit, limit ?? ownLimit),
            clock: backend.clock, center: self)
    }

    /// The extension as a backend runs it: the content to deliver.
    var serviceExtensionHandler: ServiceExtensionHandler {
        { [weak self] request, limit in
            guard let self, let run = self.startServiceExtension(for: request, limit: limit) else {
                return request.content
            }
            return await run.content()
        }
    }

    /// Shows this app's notifications on a surface (a terminal, a desktop) as well, with the
    /// presentation the engine decided (or, while the app is in front, the delegate's `willPresent`
    /// answer). The surface runs on a queue of its own. (A Chime addition.)
    public func addSurface(_ surface: any NotificationSurface) {
        let attachment = backend.hub.attach(surface, app: bundleIdentifier)
        state.withLock { $0.attachments.append(attachment) }
    }

    package var timeZone: TimeZone {
        get { state.withLock { $0.timeZone } }
        set { state.withLock { $0.timeZone = newValue } }
    }

    // MARK: - Authorization

    /// Asks the user to allow notifications; asks once, later calls answer from the stored choice.
    @preconcurrency

    public func requestAuthorization(
        options: UNAuthorizationOptions = [],
        completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        backend.requestAuthorization(app: bundleIdentifier, options: options) { result in
            self.callback {
                switch result {
                case .success(let granted): completionHandler(granted, nil)
                case .failure(let error): completionHandler(false, error)
                }
            }
        }
    }

    /// Asks the user to allow notifications; returns whether they are allowed.
    public func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        try await backend.run { backend.requestAuthorization(app: bundleIdentifier, options: options, completion: $0) }
    }

    /// The app's settings.
    @preconcurrency

    public func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {
        backend.settings(app: bundleIdentifier) { result in
            self.callback {
                completionHandler(UNNotificationSettings(value: (try? result.get()) ?? NotificationSettings()))
            }
        }
    }

    /// The app's settings.
    public func notificationSettings() async -> UNNotificationSettings {
        UNNotificationSettings(value: (try? await currentSettings()) ?? NotificationSettings())
    }

    // MARK: - Categories

    /// Replaces the app's categories. Invalid categories (an action identifier listed twice, an
    /// empty identifier) are rejected with a message on standard error; use
    /// ``setNotificationCategories(_:completionHandler:)`` to receive the error.
    public func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        setNotificationCategories(categories) { error in
            if let error { Self.report("setNotificationCategories", error) }
        }
    }

    /// Replaces the app's categories and reports the outcome. (A Chime addition.)
    @preconcurrency

    public func setNotificationCategories(
        _ categories: Set<UNNotificationCategory>,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        let values = categories.map(\.value).sorted { $0.identifier < $1.identifier }
        backend.setCategories(values, app: bundleIdentifier) { result in
            self.callback { completionHandler(result.failure) }
        }
    }

    /// The app's categories.
    @preconcurrency

    public func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void)
    {
        backend.categories(app: bundleIdentifier) { result in
            self.callback {
                completionHandler(Set(((try? result.get()) ?? []).map(UNNotificationCategory.init(value:))))
            }
        }
    }

    /// The app's categories.
    public func notificationCategories() async -> Set<UNNotificationCategory> {
        Set(
            ((try? await backend.run { backend.categories(app: bundleIdentifier, completion: $0) }) ?? []).map(
                UNNotificationCategory.init(value:)))
    }

    // MARK: - Requests

    /// Schedules a request, replacing a pending one with the same identifier. The completion
    /// handler runs after the request is stored, with `nil` or the error.
    @preconcurrency

    ///
    /// As on iOS, the files of the content's attachments are moved into the app's attachment store
    /// (in Chime's data directory) first: the app's file is gone afterwards, and the stored
    /// attachment's `url` points into the store, where the file stays until the notification is
    /// removed. A file that cannot be moved fails the add with `UNError`
    /// `attachmentMoveIntoDataStoreFailed`; a failed add moves the files back.
    public func add(
        _ request: UNNotificationRequest,
        withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        let value: NotificationRequest
        let taken: AttachmentStore.Taken
        do {
            (value, taken) = try storableValue(of: request)
        } catch {
            backend.fail(error) { _ in self.callback { completionHandler?(error) } }
            if completionHandler == nil { Self.report("add(\"\(request.identifier)\")", error) }
            return
        }
        backend.add([value], app: bundleIdentifier) { result in
            self.attachmentStore.settle(taken, committed: result.failure == nil)
            if completionHandler == nil, let error = result.failure {
                Self.report("add(\"\(request.identifier)\")", error)
            }
            self.callback { completionHandler?(result.failure) }
        }
    }

    /// Schedules a request, replacing a pending one with the same identifier; returns after it is
    /// stored. Attachment files are moved into the attachment store, as by
    /// ``add(_:withCompletionHandler:)``.
    public func add(_ request: UNNotificationRequest) async throws {
        let (value, taken) = try storableValue(of: request)
        let values = [value]
        do {
            _ = try await backend.run { backend.add(values, app: bundleIdentifier, completion: $0) }
            attachmentStore.settle(taken, committed: true)
        } catch {
            attachmentStore.settle(taken, committed: false)
            throw error
        }
    }

    /// The request as the engine takes it, its attachment files moved into the attachment store.
    private func storableValue(of request: UNNotificationRequest) throws -> (NotificationRequest, AttachmentStore.Taken)
    {
        var value = try request.coreValue()
        let taken = try attachmentStore.take(&value.content.attachments)
        return (value, taken)
    }

    /// The pending requests, in the order they were added.
    @preconcurrency

    public func getPendingNotificationRequests(completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void)
    {
        backend.pending(app: bundleIdentifier) { result in
            self.callback { completionHandler(((try? result.get()) ?? []).map(Self.request(from:))) }
        }
    }

    /// The pending requests, in the order they were added.
    public func pendingNotificationRequests() async -> [UNNotificationRequest] {
        ((try? await backend.run { backend.pending(app: bundleIdentifier, completion: $0) }) ?? []).map(
            Self.request(from:))
    }

    private static func request(from pending: PendingRequest) -> UNNotificationRequest {
        UNNotificationRequest(value: pending.request, scheduledDate: pending.nextFireDate)
    }

    /// Removes pending requests.
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        backend.removePending(app: bundleIdentifier, identifiers: identifiers) { _ in self.attachmentsChanged() }
    }

    /// Removes every pending request.
    public func removeAllPendingNotificationRequests() {
        backend.removePending(app: bundleIdentifier, identifiers: nil) { _ in self.attachmentsChanged() }
    }

    // MARK: - Delivered

    /// The delivered notifications, newest first.
    @preconcurrency

    public func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void) {
        backend.delivered(app: bundleIdentifier) { result in
            self.callback { completionHandler(((try? result.get()) ?? []).map(UNNotification.init(value:))) }
        }
    }

    /// The delivered notifications, newest first.
    public func deliveredNotifications() async -> [UNNotification] {
        ((try? await backend.run { backend.delivered(app: bundleIdentifier, completion: $0) }) ?? []).map(
            UNNotification.init(value:))
    }

    /// Removes delivered notifications.
    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        backend.removeDelivered(app: bundleIdentifier, identifiers: identifiers) { _ in self.attachmentsChanged() }
    }

    /// Removes every delivered notification.
    public func removeAllDeliveredNotifications() {
        backend.removeDelivered(app: bundleIdentifier, identifiers: nil) { _ in self.attachmentsChanged() }
    }

    // MARK: - Badge

    /// Sets the app's badge; 0 clears it. A negative count fails with `badgeInputInvalid`.
    @preconcurrency

    public func setBadgeCount(
        _ newBadgeCount: Int, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        backend.setBadge(newBadgeCount, app: bundleIdentifier) { result in
            self.callback { completionHandler?(result.failure) }
        }
    }

    /// Sets the app's badge; 0 clears it.
    public func setBadgeCount(_ newBadgeCount: Int) async throws {
        try await backend.run { backend.setBadge(newBadgeCount, app: bundleIdentifier, completion: $0) }
    }

    // MARK: - Events: presentation and responses

    /// Processes what a driven center's engine announced: waits until the completion handlers of
    /// the operations called so far have run, the surfaces (and `willPresent`) have shown every
    /// delivery, hands responses to the delegate, and repeats until nothing is left — including
    /// what the callbacks caused.
    package func processEvents() async {
        while true {
            await backend.barrier()
            // Every operation before the barrier has handed its completion handler to the queue.
            let issued = callbacksIssued.load(ordering: .acquiring)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                callbackQueue.async { continuation.resume() }
            }
            let presented = await backend.hub.settle()
            await drainOutbox()
            let responses = state.withLock { state -> [NotificationResponse] in
                defer { state.buffered.removeAll() }
                return state.buffered
            }
            for response in responses { await handOver(response) }
            await sweepAttachments()
            let calledBack = callbacksIssued.load(ordering: .acquiring) != issued
            if responses.isEmpty && !presented && !calledBack { return }
        }
    }

    @MainActor private func askWillPresent(_ notifications: [UNNotification]) async
        -> [UNNotificationPresentationOptions?]
    {
        var answers: [UNNotificationPresentationOptions?] = []
        answers.reserveCapacity(notifications.count)
        for notification in notifications {
            // Asked again for each: a callback may set or clear the delegate.
            guard let delegate else {
                answers.append([])
                continue
            }
            answers.append(await delegate.userNotificationCenter(self, willPresent: notification))
        }
        return answers
    }

    @MainActor private func tellDidReceive(_ response: UNNotificationResponse) async -> Bool {
        guard let delegate else { return false }
        await delegate.userNotificationCenter(self, didReceive: response)
        return true
    }

    /// Hands a response to the delegate; when its completion handler has run, acknowledges it so it
    /// leaves the outbox. Without a delegate the response stays in the outbox for later.
    private func handOver(_ response: NotificationResponse) async {
        let start = state.withLock { state -> Bool in
            guard !state.handled.contains(response.id), !state.inFlight.contains(response.id) else { return false }
            state.inFlight.insert(response.id)
            return true
        }
        guard start else { return }
        let answer = UNNotificationResponse.make(response)
        let delivered = await UNUserNotificationCenter.$scoped.withValue(self) { await self.tellDidReceive(answer) }
        if delivered {
            try? await backend.acknowledgeResponse(response.id, app: bundleIdentifier)
            attachmentsChanged()  // the answer no longer holds its notification's files
        }
        let idle = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.inFlight.remove(response.id)
            if delivered { state.handled.insert(response.id) }
            guard state.inFlight.isEmpty else { return [] }
            defer { state.idleWaiters.removeAll() }
            return state.idleWaiters
        }
        for waiter in idle { waiter.resume() }
    }

    /// Hands over every response waiting in the outbox (at start-up and when a delegate is set).
    package func drainOutbox() async {
        guard delegate != nil, let waiting = try? await backend.outbox(app: bundleIdentifier) else { return }
        for response in waiting { await handOver(response) }
    }

    /// Why this process was started: ``ChimeLaunchReason/response`` when the Chime service started
    /// it to hand the app the user's answers while it was not running (`CHIME_LAUNCH_REASON`), as iOS
    /// launches an app in the background for a notification action; `nil` when the user started it.
    /// (A Chime addition.)
    ///
    /// ```swift
    /// if UNUserNotificationCenter.launchReason == .response {
    ///     center.delegate = handler
    ///     await center.handleWaitingResponses()   // every answer handed to didReceive and acknowledged
    ///     exit(0)
    /// }
    /// ```
    public static var launchReason: ChimeLaunchReason? {
        ProcessInfo.processInfo.environment["CHIME_LAUNCH_REASON"].flatMap(ChimeLaunchReason.init(rawValue:))
    }

    /// Hands every answer waiting in the app's outbox to the delegate's `didReceive`, and returns
    /// when their completion handlers have run and they are acknowledged (they then leave the
    /// outbox for good). What a process started in the background calls before it exits. Set the
    /// delegate first: without one, answers stay waiting. (A Chime addition.)
    public func handleWaitingResponses() async {
        await drainOutbox()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.inFlight.isEmpty { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// The user's answer, as a surface reports it: checked, stored in the outbox, handed over.
    /// (A Chime addition, for surfaces and tools.)
    @discardableResult
    public func respond(to identifier: String, actionIdentifier: String, userText: String? = nil) async throws -> Bool {
        try await backend.answer(
            app: bundleIdentifier, notification: identifier, action: actionIdentifier, userText: userText)
    }

    /// The receipt of an escalating notification (one added with
    /// ``UNNotificationRequest/escalation``; a Chime addition): how often it was alerted, whether,
    /// when, with which action and where the user answered it, whether its window ended unanswered.
    /// Kept after the notification leaves the delivered list; `nil` when it has none.
    ///
    /// ```swift
    /// if let receipt = try await center.receipt(for: "wake"), !receipt.acknowledged, receipt.expired {
    ///     callSomeoneElse()
    /// }
    /// ```
    public func receipt(for identifier: String) async throws -> EscalationReceipt? {
        try await backend.receipt(app: bundleIdentifier, notification: identifier)
    }

    // MARK: - Attachments

    /// Whether an event may leave attachment files that nothing refers to: a removal, or an answer
    /// (a tap removes the delivered notification).
    private static func mayFreeAttachments(_ event: EngineEvent) -> Bool {
        switch event.payload {
        case .removed, .response: true
        default: false
        }
    }

    /// Something may no longer refer to its attachment files: a driven center sweeps in
    /// ``processEvents()``; a live one starts a sweep after the ones before.
    private func attachmentsChanged() {
        attachmentStore.markDirty()
        guard !isDriven else { return }
        state.withLock { state in
            let previous = state.sweepChain
            state.sweepChain = Task { [weak self] in
                await previous?.value
                await self?.sweepAttachments()
            }
        }
    }

    /// Removes the attachment files no pending request, delivered notification or unacknowledged
    /// answer refers to.
    private func sweepAttachments() async {
        let backend = self.backend
        let app = bundleIdentifier
        await attachmentStore.sweepIfNeeded {
            guard let pending = try? await backend.run({ backend.pending(app: app, completion: $0) }),
                let delivered = try? await backend.run({ backend.delivered(app: app, completion: $0) }),
                let outbox = try? await backend.outbox(app: app)
            else { return nil }
            return pending.flatMap(\.request.content.attachments) + delivered.flatMap(\.request.content.attachments)
                + outbox.flatMap(\.notification.request.content.attachments)
        }
    }

    // MARK: - Helpers

    private func currentSettings() async throws -> NotificationSettings {
        let backend = self.backend
        let app = bundleIdentifier
        return try await backend.run { backend.settings(app: app, completion: $0) }
    }

    /// Runs user completion handlers off the engine's writer, in order, with `current()` (and the
    /// "now" of trigger objects' `nextTriggerDate()`) bound to this center. One queue per center,
    /// so one app's (or test's) handlers never wait for another's.
    func callback(_ body: @escaping @Sendable () -> Void) {
        callbacksIssued.add(1, ordering: .releasing)
        callbackQueue.async { [self] in
            UNUserNotificationCenter.$scoped.withValue(self) { body() }
        }
    }

    static func report(_ operation: String, _ error: any Error) {
        FileHandle.standardError.write(Data("Chime: \(operation) failed: \(error)\n".utf8))
    }
}

/// The extension's class. `@unchecked Sendable`: a metatype is only used to make instances.
private struct ExtensionType: @unchecked Sendable {
    let type: UNNotificationServiceExtension.Type
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Why the Chime service started a process (``UNUserNotificationCenter/launchReason``).
public enum ChimeLaunchReason: String, Sendable {
    /// To hand the app the user's answers: its delegate's `didReceive` gets them.
    case response
}

/// "Now" and the time zone for trigger objects made outside any center (`nextTriggerDate()`).
enum ChimeEnvironment {
    static func now() -> Date {
        (UNUserNotificationCenter.bound() ?? UNUserNotificationCenter.defaultCenter)?.backend.now ?? Date()
    }

    static func timeZone() -> TimeZone {
        (UNUserNotificationCenter.bound() ?? UNUserNotificationCenter.defaultCenter)?.timeZone ?? .current
    }
}
