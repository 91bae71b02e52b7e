import ChimeCore
import ChimeSQLite
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: backup

    static let backup = Command(
        name: "backup",
        summary: "copy the service's store to a file, while it runs (SQLite's online backup), and check the copy",
        usage: "chime backup FILE [--data DIR]",
        examples: [
            "chime backup ~/chime-$(date +%F).sqlite", "chime backup /backups/chime.sqlite --data /var/lib/chime",
        ],
        options: [],
        notes: [
            "To restore: stop the service, copy the backup to DATA/chime.sqlite (remove chime.sqlite-wal and -shm), start it."
        ],
        run: { arguments, cli in
            guard arguments.positionals.count == 1 else {
                throw UsageError("give the file to write: chime backup FILE")
            }
            let destination = arguments.positionals[0]
            let data = arguments.value("data") ?? ChimeService.defaultDataDirectory()
            let source = data + "/chime.sqlite"
            guard FileManager.default.fileExists(atPath: source) else {
                throw CommandError("no store at \(source); pass the service's data directory with --data")
            }
            let showsProgress = isatty(STDERR_FILENO) == 1
            let started = Date()
            let summary: SQLiteStore.BackupSummary
            do {
                summary = try SQLiteStore.backup(from: source, to: destination) { copied, total in
                    if showsProgress, total > 0 {
                        cli.writeError(
                            "\u{1B}[1A\u{1B}[2Kcopying: \(copied * 100 / total)% of \(total.formatted()) pages")
                    }
                }
            } catch let error as ChimeError {
                throw CommandError(error.message)
            }
            let megabytes = String(format: "%.1f", Double(summary.bytes) / 1_048_576)
            if arguments.has("json") {
                cli.write(
                    JSONValue.object([
                        "file": .string(destination), "bytes": .integer(Int64(summary.bytes)),
                        "apps": .integer(Int64(summary.apps)),
                        "pending": .integer(Int64(summary.pending)), "delivered": .integer(Int64(summary.delivered)),
                    ]).serialized(pretty: true))
            } else {
                cli.write(
                    "Backed up \(source) to \(destination): \(megabytes) MB, \(plural(summary.apps, "app")), \(plural(summary.pending, "pending request")), \(plural(summary.delivered, "delivered notification")); checked (\(String(format: "%.1f", Date().timeIntervalSince(started))) s)."
                )
            }
            return 0
        })

    static func plural(_ count: Int, _ noun: String) -> String {
        "\(count.formatted()) \(noun)\(count == 1 ? "" : "s")"
    }
}
