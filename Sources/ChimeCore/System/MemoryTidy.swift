#if canImport(Glibc)
    import Glibc
#endif

/// Hands memory the process freed back to the system, and with it settles the allocator's
/// deferred bookkeeping.
///
/// glibc keeps small freed blocks on per-arena lists and merges them only when a larger request
/// next needs the space: after an app dropped the hundreds of thousands of requests it had just
/// added, that merge (`malloc_consolidate`) took 112 ms inside the first firing transaction on the
/// engine's writer. The scheduler calls ``settle()`` shortly before the first due date after a
/// quiet spell (``NotificationEngine/Configuration/memoryTidyLead``), so the merge happens then,
/// not while a notification is late.
enum MemoryTidy {
    /// `malloc_trim(0)`: merges every arena's free blocks and returns free pages to the system.
    /// Without glibc's allocator, nothing.
    static func settle() {
        _ = trim?(0)
    }

    /// glibc's `malloc_trim`, looked up once (`<malloc.h>` is not part of Swift's Glibc module).
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
            return nil
        #endif
    }()
}
