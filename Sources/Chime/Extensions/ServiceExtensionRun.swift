import ChimeCore
import Foundation
import Synchronization

/// One run of an app's notification service extension on one notification: makes the instance,
/// calls `didReceive` on the extension's queue, and settles on the content to deliver — the first
/// content handed to the handler, or, when the time limit passes first, what the handler got before
/// `serviceExtensionTimeWillExpire()` returned, else the original content.
///
/// The time limit runs on the center's clock: real time for an app, virtual time under the
/// simulator (the run wakes when the simulator's clock passes ``deadline``).
///
/// `@unchecked Sendable`: the answer and the waiters are behind a `Mutex`, `outcome` is written
/// once, in `init`, and the extension instance is touched only on `queue`.
package final class ServiceExtensionRun: @unchecked Sendable {
    /// When the extension's time runs out.
    package let deadline: Date
    /// The notification as it arrived.
    package let original: NotificationRequest

    private let queue = DispatchQueue(label: "chime.service-extension")
    private struct State {
        var answer: UNNotificationContent?
        var closed = false
        var timeUp = false
        var waiter: CheckedContinuation<Void, Never>?
        var returned = false
        var returnWaiters: [CheckedContinuation<Void, Never>] = []
        /// Whether the content handler was called (the first call counts).
        var handedOver = false
    }

    private let state = Mutex(State())
    private var outcome: Task<NotificationContent, Never>?
    /// Where the content's attachment files go, when the handler is called.
    private let attachmentStore: AttachmentStore

    /// Starts the extension at once.
    package init(
        extension type: UNNotificationServiceExtension.Type, request: NotificationRequest, timeLimit: TimeInterval,
        clock: any NotificationClock, center: UNUserNotificationCenter
    ) {
        original = request
        deadline = clock.now.addingTimeInterval(timeLimit)
        attachmentStore = center.attachmentStore
        let box = InstanceBox()
        let shown = UNNotificationRequest(value: request)
        queue.async { [self] in
            UNUserNotificationCenter.$scoped.withValue(center) {
                box.instance = type.init()
                box.instance?.didReceive(shown) { [self] content in take(content) }
            }
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.returned = true
                defer { state.returnWaiters.removeAll() }
                return state.returnWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
        outcome = Task { [self] in
            let timer = Task { [self] in
                try? await clock.sleep(until: deadline)
                wake()
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.answer != nil || state.timeUp { return true }
                    state.waiter = continuation
                    return false
                }
                if done { continuation.resume() }
            }
            timer.cancel()
            if state.withLock({ $0.answer == nil }) {
                // Out of time: the extension's last chance to hand over its best attempt.
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    queue.async {
                        UNUserNotificationCenter.$scoped.withValue(center) {
                            box.instance?.serviceExtensionTimeWillExpire()
                        }
                        continuation.resume()
                    }
                }
            }
            let final = state.withLock { state -> UNNotificationContent? in
                state.closed = true
                return state.answer
            }
            // Let the instance go on its own queue, where it lived.
            queue.async { box.instance = nil }
            return Self.deliverable(
                final, original: request.content, identifier: request.identifier, attachments: center.attachmentStore)
        }
    }

    /// The content to deliver, once the extension answered or its time ran out.
    package func content() async -> NotificationContent {
        await outcome?.value ?? original.content
    }

    /// Returns once `didReceive` has returned (the extension may still answer later).
    package func didReceiveReturned() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.returned { return true }
                state.returnWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The content handler: the first call counts, later ones and calls after the run closed do not.
    /// The content's attachment files are moved into the attachment store before it returns, as
    /// the extension may delete its temporary files once it has handed the content over.
    private func take(_ content: UNNotificationContent) {
        let first = state.withLock { state -> Bool in
            guard !state.handedOver, !state.closed else { return false }
            state.handedOver = true
            return true
        }
        guard first else { return }
        // A copy: the extension may go on changing its mutable content after handing it over.
        let copy = content.mutableCopy() as! UNMutableNotificationContent
        var attachments = copy.attachments.map(\.value)
        // A file that cannot be moved is reported when the content is taken (`deliverable`).
        if (try? attachmentStore.adopt(&attachments)) != nil {
            copy.attachments = attachments.map(UNNotificationAttachment.init(value:))
        }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            state.answer = copy
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.timeUp = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The extension's content as the engine takes it, its attachment files moved into the app's
    /// attachment store (as iOS moves the files an extension attaches); the original when it
    /// cannot be delivered (`userInfo` that is not a property list, a field out of range, a file
    /// that cannot be moved), with a message saying why.
    private static func deliverable(
        _ content: UNNotificationContent?, original: NotificationContent, identifier: String,
        attachments: AttachmentStore
    ) -> NotificationContent {
        guard let content else { return original }
        do {
            var value = try content.coreValue()
            try Validation.validate(value)
            try attachments.adopt(&value.attachments)
            return value
        } catch {
            UNUserNotificationCenter.report(
                "the notification service extension's content for \"\(identifier)\" (delivered as it arrived)", error)
            return original
        }
    }
}

/// The extension instance. `@unchecked Sendable`: read and written on the run's queue only.
private final class InstanceBox: @unchecked Sendable {
    var instance: UNNotificationServiceExtension?
}
