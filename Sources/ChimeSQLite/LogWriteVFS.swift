import CSQLite
import Foundation

/// The store's writer opens its file through this SQLite VFS (named `chime-log`): the system's own
/// (`unix`) with one change, how the write-ahead log is written.
///
/// SQLite writes each log frame as two `pwrite` calls (a 24-byte header, then the page), so a
/// commit of 64 pages is 128 calls, each finding and dirtying its page-cache folios again. Here the
/// frames of a commit are gathered in memory, in file order, and written with one call when the
/// commit's last frame (the one whose header carries the database size: a commit record in the
/// log's file format) has been handed over — before SQLite goes on to publish the commit to readers
/// in the shared-memory index, and before the commit returns. So what a commit acknowledges is in
/// the file exactly as before (in the kernel's page cache with `synchronous=NORMAL`, surviving a
/// killed process; on disk with `FULL`, whose sync flushes first), and a failed write fails the
/// commit. Anything else SQLite does with the log — a read, a sync, a truncate, its size, a write
/// elsewhere in the file, closing it — writes what is gathered first, so SQLite never sees the file
/// other than as it wrote it. Other files (the database, a rollback journal) are the `unix` VFS's
/// own, untouched.
///
/// Measured (docs/benchmarks.md, issue 25): the realistic add path's writer spent about a quarter
/// of its time in `pwrite` of log frames; writing a commit's frames in one call costs about a sixth
/// of writing them as header and page on this machine kind (a C loop of 100,000 frames: 0.5 µs a
/// frame against 3 µs).
enum LogWriteVFS {
    /// The VFS's registered name.
    static let name = "chime-log"

    /// Registers the VFS (once, not as the default); `false` when SQLite has no default VFS to wrap.
    static let registered: Bool = {
        guard let system = LogWriteVFS.system else { return false }
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: system.pointee)
        vfs.pointee.pNext = nil
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.szOsFile = Int32(innerOffset) + system.pointee.szOsFile
        vfs.pointee.xOpen = { _, path, file, flags, outFlags in
            guard let file, let system = LogWriteVFS.system else { return SQLITE_MISUSE }
            // Not the log: the system's file, its methods at the start of SQLite's memory.
            guard flags & SQLITE_OPEN_WAL != 0 else {
                return system.pointee.xOpen!(system, path, file, flags, outFlags)
            }
            LogWriteVFS.gathered(file).initialize(to: Gathered())
            let code = system.pointee.xOpen!(system, path, LogWriteVFS.inner(file), flags, outFlags)
            // SQLite reads pMethods whether or not the open succeeded (nil: nothing to close).
            file.pointee.pMethods =
                LogWriteVFS.inner(file).pointee.pMethods == nil ? nil : UnsafePointer(LogWriteVFS.methods)
            return code
        }
        return sqlite3_vfs_register(vfs, 0) == SQLITE_OK
    }()

    /// The VFS this one wraps (SQLite's default, `unix`). Set once, before registering, and only read.
    nonisolated(unsafe) private static let system = sqlite3_vfs_find(nil)

    /// The most bytes gathered before they are written (a commit of more is written in parts):
    /// the `unix` VFS takes at most 128 KiB − 1 bytes in one write (it keeps the low 17 bits of a
    /// larger count, and answers `SQLITE_FULL` when what is left comes to 0).
    static let capacity = (1 << 17) - 1

    /// A log file's frames not written yet: `count` bytes at `buffer`, for the file at `start`.
    struct Gathered {
        var buffer: UnsafeMutableRawPointer?
        var start: Int64 = 0
        var count = 0
        /// The last write was a commit record's header: its page completes the commit.
        var commitPage = false
    }

    /// SQLite's memory for a log file: `sqlite3_file` (its methods), then `Gathered`, then the
    /// system VFS's own file.
    private static let gatheredOffset = MemoryLayout<sqlite3_file>.stride
    private static let innerOffset = (gatheredOffset + MemoryLayout<Gathered>.stride + 15) & ~15
    /// A frame header's size in the log's file format.
    private static let frameHeader = 24

    @inline(__always) private static func gathered(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<
        Gathered
    > {
        UnsafeMutableRawPointer(file).advanced(by: gatheredOffset).assumingMemoryBound(to: Gathered.self)
    }

    @inline(__always) private static func inner(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<
        sqlite3_file
    > {
        UnsafeMutableRawPointer(file).advanced(by: innerOffset).assumingMemoryBound(to: sqlite3_file.self)
    }

    @inline(__always) private static func innerMethods(_ file: UnsafeMutablePointer<sqlite3_file>) -> sqlite3_io_methods
    {
        inner(file).pointee.pMethods.pointee
    }

    /// Writes what is gathered, in one call; returns SQLite's code for it.
    private static func flush(_ file: UnsafeMutablePointer<sqlite3_file>) -> Int32 {
        let state = gathered(file)
        guard state.pointee.count > 0 else { return SQLITE_OK }
        let count = state.pointee.count
        state.pointee.count = 0
        state.pointee.commitPage = false
        return innerMethods(file).xWrite!(inner(file), state.pointee.buffer, Int32(count), state.pointee.start)
    }

    /// Writes what is gathered, then (unless that failed) runs `body` with the system VFS's file
    /// and its methods.
    @inline(__always) private static func flushed(
        _ file: UnsafeMutablePointer<sqlite3_file>?,
        _ body: (UnsafeMutablePointer<sqlite3_file>, sqlite3_io_methods) -> Int32
    ) -> Int32 {
        let code = flush(file!)
        return code != SQLITE_OK ? code : body(inner(file!), innerMethods(file!))
    }

    private static func write(
        _ file: UnsafeMutablePointer<sqlite3_file>, _ data: UnsafeRawPointer, _ amount: Int, _ offset: Int64
    ) -> Int32 {
        let state = gathered(file)
        // Whether this write is the page after a commit record's header, noted before a flush of
        // what is gathered (which clears it): the header may have been the last thing to fit.
        let completesCommit = state.pointee.commitPage
        // Only bytes that continue the gathered ones in the file are added to them.
        if state.pointee.count > 0,
            offset != state.pointee.start + Int64(state.pointee.count) || state.pointee.count + amount > capacity
        {
            let code = flush(file)
            if code != SQLITE_OK { return code }
        }
        if amount > capacity {
            state.pointee.commitPage = false
            return innerMethods(file).xWrite!(inner(file), data, Int32(amount), offset)
        }
        if state.pointee.buffer == nil {
            guard let buffer = malloc(capacity) else {
                return innerMethods(file).xWrite!(inner(file), data, Int32(amount), offset)
            }
            state.pointee.buffer = buffer
        }
        if state.pointee.count == 0 { state.pointee.start = offset }
        state.pointee.buffer!.advanced(by: state.pointee.count).copyMemory(from: data, byteCount: amount)
        state.pointee.count += amount
        // The page after a commit record's header ends the commit: written now, before SQLite
        // publishes it, and its failure is the commit's.
        if completesCommit { return flush(file) }
        if amount == frameHeader {
            // Bytes 4-7 of a frame header: the database's size in pages after a commit, 0 otherwise.
            let bytes = data.assumingMemoryBound(to: UInt8.self)
            state.pointee.commitPage = bytes[4] | bytes[5] | bytes[6] | bytes[7] != 0
        }
        return SQLITE_OK
    }

    private static func close(_ file: UnsafeMutablePointer<sqlite3_file>) -> Int32 {
        let flushed = flush(file)
        let closed = innerMethods(file).xClose!(inner(file))
        free(gathered(file).pointee.buffer)
        gathered(file).pointee.buffer = nil
        return flushed != SQLITE_OK ? flushed : closed
    }

    /// The log file's methods: writes gathered, everything else after writing what is gathered.
    nonisolated(unsafe) private static let methods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(to: sqlite3_io_methods())
        // Version 1: SQLite maps no log file into memory, and its shared memory is the database file's.
        methods.pointee.iVersion = 1
        methods.pointee.xClose = { file in LogWriteVFS.close(file!) }
        methods.pointee.xRead = { file, data, amount, offset in
            LogWriteVFS.flushed(file) { $1.xRead!($0, data, amount, offset) }
        }
        methods.pointee.xWrite = { file, data, amount, offset in LogWriteVFS.write(file!, data!, Int(amount), offset) }
        methods.pointee.xTruncate = { file, size in LogWriteVFS.flushed(file) { $1.xTruncate!($0, size) } }
        methods.pointee.xSync = { file, flags in LogWriteVFS.flushed(file) { $1.xSync!($0, flags) } }
        methods.pointee.xFileSize = { file, size in LogWriteVFS.flushed(file) { $1.xFileSize!($0, size) } }
        methods.pointee.xLock = { file, level in LogWriteVFS.flushed(file) { $1.xLock!($0, level) } }
        methods.pointee.xUnlock = { file, level in LogWriteVFS.flushed(file) { $1.xUnlock!($0, level) } }
        methods.pointee.xCheckReservedLock = { file, result in
            LogWriteVFS.flushed(file) { $1.xCheckReservedLock!($0, result) }
        }
        methods.pointee.xFileControl = { file, operation, argument in
            LogWriteVFS.flushed(file) { $1.xFileControl!($0, operation, argument) }
        }
        methods.pointee.xSectorSize = { file in LogWriteVFS.innerMethods(file!).xSectorSize!(LogWriteVFS.inner(file!)) }
        methods.pointee.xDeviceCharacteristics = { file in
            LogWriteVFS.innerMethods(file!).xDeviceCharacteristics!(LogWriteVFS.inner(file!))
        }
        return methods
    }()
}
