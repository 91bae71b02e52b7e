import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program started with `posix_spawn` and reaped by a thread of its own: what Chime uses
/// instead of Foundation's `Process`.
///
/// Why not `Process`: on Linux, `Process.run()` scans `/proc/self/fd` with a 256-byte copy of
/// each directory entry and crashes the whole program now and then when one sits at the end of a
/// mapped page (swift-corelibs-foundation #5472, not in a 6.3 release); it hands the calling
/// thread's signal mask to the child (Swift's threads block nearly every signal, so the child
/// ignores `SIGTERM` for life); and its reaping, driven by a run loop, can miss a child's exit,
/// leaving a zombie that a `waitUntilExit()` waits on forever.
///
/// Here the child starts with an empty signal mask and default dispositions, with no descriptor
/// of the parent but the three it is given, and a thread blocked in `waitpid` on its pid alone
/// learns its end at once.
///
/// ```swift
/// let output = Pipe()
/// let child = try ChildProcess(executable: "/usr/bin/printf", arguments: ["hello"], stdout: .pipe(output))
/// let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
/// let end = await child.termination   // .exited(0)
/// ```
package final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    package enum Stream: Sendable {
        /// The parent's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// One end of a pipe: the child's stdin reads the pipe, its stdout or stderr writes it.
        /// The parent's copy of the child's end is closed once the child has started. Keep the
        /// `Pipe` as long as you read it: Foundation closes its ends when it is released, and a
        /// child writing to a pipe nobody reads then dies of `SIGPIPE`.
        case pipe(Pipe)
        /// An open file (the parent keeps it).
        case file(FileHandle)
    }

    /// How a child ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// Whether it exited with status 0.
        package var succeeded: Bool { self == .exited(0) }

        package var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal):
                "signal \(signal)" + (signal == SIGKILL ? " (SIGKILL)" : signal == SIGTERM ? " (SIGTERM)" : "")
            }
        }
    }

    private struct State {
        var termination: Termination?
        var waiters: [CheckedContinuation<Termination, Never>] = []
        var handlers: [@Sendable (Termination) -> Void] = []
    }

    /// The child's process id.
    package let pid: pid_t
    private let state = Mutex(State())
    private let ended = DispatchSemaphore(value: 0)

    /// Starts `executable` (a path; no `PATH` search) with `arguments` (without the program's
    /// name), `environment` (`nil`: the parent's), in `directory` (`nil`: the parent's), and in a
    /// session of its own when `newSession` (it then outlives the parent's terminal and group).
    ///
    /// - Throws: ``StartError`` naming the program and the reason when it cannot be started (not
    ///   found, not executable, …).
    package init(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, stdin: Stream = .null, stdout: Stream = .inherit, stderr: Stream = .inherit,
        newSession: Bool = false
    ) throws {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .inherit: break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe(let pipe):
                let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
            case .file(let handle): posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            }
        }
        // Nothing of the parent's but the three streams (descriptors without FD_CLOEXEC included).
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        if let directory {
            guard let changeDirectory = Self.changeDirectory else {
                throw StartError(
                    message:
                        "cannot start \(executable) in \(directory): this C library cannot change the directory of a spawned program"
                )
            }
            _ = changeDirectory(&actions, directory)
        }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newSession { flags |= Self.spawnSetSID }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child = pid_t()
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw StartError(message: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        // The parent's copies of the child's pipe ends: closed, so the other end sees the end of
        // the stream when the child exits.
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            if case .pipe(let pipe) = stream {
                try? (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
            }
        }
        let reaper = Thread { [self] in reap() }
        reaper.name = "chime.reap"
        reaper.start()
    }

    private func reap() {
        // Wait without reaping, then reap under the lock: `signal(_:)` (also under it) can never
        // reach another process that was given the pid after this one was reaped.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        let (end, waiters, handlers) = state.withLock { state in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
            let signal = status & 0x7f
            let end: Termination = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
            state.termination = end
            defer {
                state.waiters.removeAll()
                state.handlers.removeAll()
            }
            return (end, state.waiters, state.handlers)
        }
        ended.signal()
        for waiter in waiters { waiter.resume(returning: end) }
        for handler in handlers { handler(end) }
    }

    /// How the child ended, once it has; `nil` while it runs.
    package var exited: Termination? { state.withLock { $0.termination } }

    /// Whether the child still runs.
    package var isRunning: Bool { exited == nil }

    /// Waits for the child's end.
    package var termination: Termination {
        get async {
            await withCheckedContinuation { continuation in
                let known = state.withLock { state -> Termination? in
                    if state.termination == nil { state.waiters.append(continuation) }
                    return state.termination
                }
                if let known { continuation.resume(returning: known) }
            }
        }
    }

    /// Waits for the child's end, at most `timeout`; `nil` when it still runs then.
    ///
    /// ```swift
    /// child.signal(SIGTERM)
    /// if await child.termination(within: .seconds(10)) == nil { child.signal(SIGKILL) }
    /// ```
    package func termination(within timeout: Duration) async -> Termination? {
        if let known = exited { return known }
        let answer = OneAnswer()
        return await withCheckedContinuation { continuation in
            answer.set(continuation)
            onExit { answer.give($0) }
            Task {
                try? await Sleep.for(timeout)
                answer.give(nil)
            }
        }
    }

    /// A continuation resumed by whichever comes first: the end, or the time limit.
    private final class OneAnswer: Sendable {
        private let continuation = Mutex<CheckedContinuation<Termination?, Never>?>(nil)

        func set(_ waiting: CheckedContinuation<Termination?, Never>) { continuation.withLock { $0 = waiting } }

        func give(_ end: Termination?) {
            let waiting = continuation.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }
            waiting?.resume(returning: end)
        }
    }

    /// Blocks the calling thread until the child ends, at most `timeout` seconds (forever when
    /// `nil`); `nil` when it still runs then.
    @discardableResult
    package func wait(timeout: TimeInterval? = nil) -> Termination? {
        if let known = exited { return known }
        if let timeout {
            guard ended.wait(timeout: .now() + timeout) == .success else { return nil }
        } else {
            ended.wait()
        }
        ended.signal()  // for the next waiter
        return exited
    }

    /// Calls `handler` once with the child's end (at once if it has ended), on the reaping thread.
    package func onExit(_ handler: @escaping @Sendable (Termination) -> Void) {
        let known = state.withLock { state -> Termination? in
            if state.termination == nil { state.handlers.append(handler) }
            return state.termination
        }
        if let known { handler(known) }
    }

    /// Sends `signal` (`SIGTERM` by default) to the child, unless it has already been reaped.
    package func signal(_ signal: Int32 = SIGTERM) {
        state.withLock { state in
            // Under the lock: the pid cannot have been reaped (and reused) in between.
            if state.termination == nil { _ = kill(pid, signal) }
        }
    }

    /// A program that could not be started, and why.
    package struct StartError: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    /// glibc's POSIX_SPAWN_SETSID (since 2.26), which Swift does not import.
    private static let spawnSetSID: Int32 = 0x80

    // MARK: - glibc's _np spawn actions (not exported to Swift without _GNU_SOURCE)

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static let closeFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
    private static let changeDirectory: ChangeDirectory? = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map {
        unsafeBitCast($0, to: ChangeDirectory.self)
    }
}
