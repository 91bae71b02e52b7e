import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a store file was when Chime last closed it cleanly, so the next open can skip reading the
/// whole file for `PRAGMA quick_check` (2.8 s at 10,000,000 pending) when nothing has touched it
/// since.
///
/// At a clean close (the last connection gone, the write-ahead log copied in and removed) the
/// file's modification time is set one second back and its identity — device, inode, size,
/// modification and status-change times to the nanosecond — is written to `PATH-verified` (0600). Opening takes the marker away before anything else and
/// trusts the file only when the identity is unchanged and no log waits beside it. Any write to the
/// file since, by Chime or anyone (`dd`, `sqlite3`, a restored copy), changes its status-change
/// time, which no program can set back; after a crash there is no marker. Either way the full check
/// runs.
enum CleanClose {
    static func markerPath(_ path: String) -> String { path + "-verified" }

    /// The file's identity, or nil when it cannot be read.
    static func identity(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return "chime-verified 1 \(info.st_dev) \(info.st_ino) \(info.st_size) "
            + "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
    }

    /// Whether a write-ahead log with content lies beside the file.
    static func hasLog(_ path: String) -> Bool {
        var info = stat()
        return stat(path + "-wal", &info) == 0 && info.st_size > 0
    }

    /// Records the file as closed cleanly (nothing is recorded while a log remains: another
    /// connection still has the file open, or the close did not finish the log).
    static func record(_ path: String) {
        guard !hasLog(path) else { return }
        // File times come from a coarse clock (a few milliseconds): a write right after this
        // close could keep them. So the modification time is set a second back; any later write
        // sets it to the present, which can never equal it.
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        var times = [
            timespec(tv_sec: info.st_mtim.tv_sec - 1, tv_nsec: info.st_mtim.tv_nsec),
            timespec(tv_sec: info.st_mtim.tv_sec - 1, tv_nsec: info.st_mtim.tv_nsec),
        ]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0, let identity = identity(path) else { return }
        let marker = markerPath(path)
        let temporary = marker + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array((identity + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != bytes.count || rename(temporary, marker) != 0 { unlink(temporary) }
    }

    /// Takes the marker away and says whether it vouches for the file as it is now.
    static func take(_ path: String) -> Bool {
        let marker = markerPath(path)
        guard let data = FileManager.default.contents(atPath: marker) else { return false }
        unlink(marker)
        guard let recorded = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            return false
        }
        return !hasLog(path) && recorded == identity(path)
    }
}
