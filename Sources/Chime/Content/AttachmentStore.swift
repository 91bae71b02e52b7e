import ChimeCore
import Foundation
import Synchronization

/// Where a center keeps its app's attachment files, as iOS keeps them in its own data store: `add`
/// moves each attachment's file into a directory of its own here (the app's file is gone
/// afterwards, as on iOS) and the stored attachment's `url` points to it; a file leaves when no
/// pending request, delivered notification or unacknowledged answer refers to it any more
/// (``sweep(referenced:)``).
///
/// Layout: `<directory>/<UUID>/<the file's own name>`, one entry per attachment added.
///
/// Sendable: the entries being added are behind a `Mutex`; the rest is immutable, and file
/// operations are atomic renames or removals of whole entries.
package final class AttachmentStore: Sendable {
    /// The app's directory (made when the first attachment is moved in).
    package let directory: URL
    /// What belongs to this store alone and goes when it does: a simulator's temporary directory
    /// (the one holding ``directory``), or `nil`.
    private let removedWithStore: URL?

    private struct Holds {
        /// Entries moved in whose request is not committed yet, so a sweep meanwhile keeps them:
        /// entry name -> how many adds hold it.
        var held: [String: Int] = [:]
        /// Entries a service extension's content moved in: kept until a sweep sees them referenced
        /// (the delivery they belong to is committed by the backend, out of the center's sight).
        var untilReferenced: Set<String> = []
        /// Whether something may no longer be referenced (a removal, a replacement, an answer).
        var dirty = true
    }

    private let holds = Mutex(Holds())

    /// - Parameter removedWithStore: a directory to remove when the store goes (a temporary one).
    init(directory: URL, removedWithStore: URL? = nil) {
        self.directory = directory.standardizedFileURL
        self.removedWithStore = removedWithStore
    }

    deinit {
        if let removedWithStore { try? FileManager.default.removeItem(at: removedWithStore) }
    }

    /// A directory of its own under the temporary directory, removed with the store (both the
    /// app's directory and the temporary one made to hold it).
    package static func temporary(app: String) -> AttachmentStore {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-attachments-\(UUID().uuidString)")
        return AttachmentStore(directory: root.appendingPathComponent(safeName(app)), removedWithStore: root)
    }

    /// The app's directory under a data directory: `<data>/attachments/<app>`.
    package static func directory(inDataDirectory data: URL, app: String) -> URL {
        data.appendingPathComponent("attachments").appendingPathComponent(safeName(app))
    }

    private static func safeName(_ app: String) -> String { app.replacingOccurrences(of: "/", with: "_") }

    /// What ``take(_:)`` moved in, to be settled with ``settle(_:committed:)``.
    struct Taken: Sendable {
        fileprivate var entries: [String] = []
        /// Files moved in from outside the store: where they came from, where they are now.
        fileprivate var moves: [(from: URL, to: URL)] = []
    }

    /// The entry an attachment's file sits in, when it is in this store.
    func entry(of url: URL) -> String? {
        let path = url.standardizedFileURL.pathComponents
        let base = directory.pathComponents
        guard url.isFileURL, path.count == base.count + 2, Array(path.prefix(base.count)) == base else { return nil }
        return path[base.count]
    }

    /// Moves the files of `attachments` into the store (those already in it stay) and returns the
    /// attachments pointing to where they now are. The entries are held against sweeps until
    /// ``settle(_:committed:)``.
    ///
    /// - Throws: ``UNError`` `attachmentMoveIntoDataStoreFailed` (104) when a file cannot be
    ///   moved (it was deleted or moved since the attachment was made, or the store cannot be
    ///   written), `attachmentNotInDataStore` (103) for a file of this store that is gone (its
    ///   notification was removed); what was moved in so far is moved back.
    func take(_ attachments: inout [NotificationAttachment]) throws -> Taken {
        var taken = Taken()
        guard !attachments.isEmpty else { return taken }
        do {
            for index in attachments.indices {
                let url = attachments[index].url
                if let entry = entry(of: url) {
                    hold([entry])
                    taken.entries.append(entry)
                    guard FileManager.default.fileExists(atPath: url.path) else {
                        throw UNError(
                            .attachmentNotInDataStore,
                            "attachment '\(attachments[index].identifier)': \(url.path) is no longer in the attachment store (its notification was removed)"
                        )
                    }
                    continue
                }
                let entry = UUID().uuidString
                let destination = directory.appendingPathComponent(entry).appendingPathComponent(url.lastPathComponent)
                hold([entry])
                taken.entries.append(entry)
                try Self.move(url, to: destination, identifier: attachments[index].identifier)
                taken.moves.append((url, destination))
                attachments[index].url = destination
            }
        } catch {
            settle(taken, committed: false)
            throw error
        }
        return taken
    }

    /// The add that ``take(_:)`` prepared was committed (the entries now count through their
    /// request) or failed (the files go back where they came from, as if the add never happened).
    func settle(_ taken: Taken, committed: Bool) {
        if !committed {
            for move in taken.moves.reversed() {
                try? FileManager.default.moveItem(at: move.to, to: move.from)
                try? FileManager.default.removeItem(at: move.to.deletingLastPathComponent())
            }
        }
        holds.withLock { holds in
            for entry in taken.entries {
                holds.held[entry, default: 0] -= 1
                if holds.held[entry] == 0 { holds.held[entry] = nil }
            }
            // A committed add may have replaced a request whose files nothing else refers to.
            holds.dirty = true
        }
    }

    /// Moves the files of a service extension's content in; they are kept until a sweep finds
    /// their notification.
    func adopt(_ attachments: inout [NotificationAttachment]) throws {
        let taken = try take(&attachments)
        holds.withLock { $0.untilReferenced.formUnion(taken.entries) }
        settle(taken, committed: true)
    }

    private func hold(_ entries: [String]) {
        holds.withLock { holds in
            for entry in entries { holds.held[entry, default: 0] += 1 }
        }
    }

    /// Something may have stopped referring to a file: the next ``sweepIfNeeded(referenced:)`` looks.
    func markDirty() { holds.withLock { $0.dirty = true } }

    /// Sweeps when something may have stopped referring to a file and the store holds any.
    ///
    /// - Parameter referenced: reads what still refers to attachments (pending requests, delivered
    ///   notifications, unacknowledged answers) — called only when there is something to sweep.
    func sweepIfNeeded(referenced: () async -> [NotificationAttachment]?) async {
        let due = holds.withLock { holds -> Bool in
            defer { holds.dirty = false }
            return holds.dirty
        }
        guard due else { return }
        await sweep(referenced: referenced)
    }

    /// Removes every entry nothing refers to.
    ///
    /// The entries are listed first, then the held ones, then what is referenced: an entry held
    /// when the list was made is kept, and one no longer held by then belongs to a committed add,
    /// which `referenced` (read afterwards) sees.
    func sweep(referenced: () async -> [NotificationAttachment]?) async {
        guard let listed = try? FileManager.default.contentsOfDirectory(atPath: directory.path), !listed.isEmpty else {
            return
        }
        let (holding, untilReferenced) = holds.withLock { (Set($0.held.keys), $0.untilReferenced) }
        guard let attachments = await referenced() else {
            markDirty()  // could not tell: try again later
            return
        }
        let inUse = Set(attachments.compactMap { entry(of: $0.url) })
        holds.withLock { $0.untilReferenced.subtract(inUse) }
        for entry in listed where !inUse.contains(entry) && !holding.contains(entry) && !untilReferenced.contains(entry)
        {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(entry))
        }
    }

    /// Moves a file into the store: a rename when it can, else a copy and removing the original
    /// (another file system). A file whose original cannot be removed (a read-only directory,
    /// such as resources shipped with the app) is copied.
    private static func move(_ source: URL, to destination: URL, identifier: String) throws {
        let files = FileManager.default
        do {
            try files.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw UNError(
                .attachmentMoveIntoDataStoreFailed,
                "attachment '\(identifier)': cannot make \(destination.deletingLastPathComponent().path) in the attachment store: \(error)"
            )
        }
        if (try? files.moveItem(at: source, to: destination)) != nil { return }
        do {
            try files.copyItem(at: source, to: destination)
        } catch {
            try? files.removeItem(at: destination.deletingLastPathComponent())
            throw UNError(
                .attachmentMoveIntoDataStoreFailed,
                "attachment '\(identifier)': cannot move \(source.path) into the attachment store: \(error)")
        }
        try? files.removeItem(at: source)
    }
}
