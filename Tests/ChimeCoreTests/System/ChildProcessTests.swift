import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("ChildProcess: programs started with posix_spawn and reaped at once", .testThreads)
struct ChildProcessTests {
    /// Runs a shell line and returns its standard output and how it ended.
    func shell(
        _ line: String, environment: [String: String]? = nil, directory: String? = nil,
        newSession: Bool = false
    ) async throws -> (output: String, end: ChildProcess.Termination) {
        let output = Pipe()
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", line], environment: environment,
            directory: directory, stdout: .pipe(output), newSession: newSession)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (text, await child.termination)
    }

    @Test("exit status, output through a pipe, environment and directory")
    func basics() async throws {
        #expect(try await shell("printf hello").output == "hello")
        #expect(try await shell("exit 3").end == .exited(3))
        #expect(try await shell("printf %s \"$GREETING\"", environment: ["GREETING": "hi there"]).output == "hi there")
        #expect(try await shell("pwd", directory: "/tmp").output == "/tmp\n")
    }

    @Test("the child starts with no signal blocked, so SIGTERM ends it, and a signal's end is reported")
    func signals() async throws {
        // Swift's threads block nearly every signal; the child must not inherit that mask.
        let blocked = try await shell("grep SigBlk /proc/self/status").output
        #expect(blocked.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("0000000000000000"), "\(blocked)")
        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(sleeper.isRunning)
        sleeper.signal(SIGTERM)
        #expect(await sleeper.termination == .signaled(SIGTERM))
        #expect(sleeper.wait(timeout: 1) == .signaled(SIGTERM))
        sleeper.signal(SIGKILL)  // after the end: nothing is sent
    }

    @Test("no descriptor of the parent but the three streams reaches the child")
    func descriptors() async throws {
        let open = open("/dev/null", O_RDONLY)  // without O_CLOEXEC: would leak with a plain fork/exec
        defer { close(open) }
        let listed = try await shell("ls /proc/self/fd").output.split(separator: "\n").compactMap { Int($0) }
        // 0, 1, 2, and the descriptor ls reads the directory with.
        #expect(listed.filter { $0 > 3 }.isEmpty, "\(listed)")
    }

    @Test("a new session: the child leads it")
    func session() async throws {
        let fields = try await shell("exec cat /proc/self/stat", newSession: true).output
        // pid (comm) state ppid pgrp session …; comm is "cat" here, without spaces.
        let parts = fields.split(separator: " ")
        #expect(parts.count > 5 && parts[0] == parts[5], "\(fields)")
    }

    @Test("waiting for the end at most some time: nil while it runs, its end once it has ended")
    func boundedWait() async throws {
        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["120"])
        #expect(await sleeper.termination(within: .milliseconds(50)) == nil)
        sleeper.signal(SIGTERM)
        #expect(await sleeper.termination(within: .seconds(60)) == .signaled(SIGTERM))
        #expect(await sleeper.termination(within: .zero) == .signaled(SIGTERM))
    }

    @Test("a program that does not exist is refused with its path, and waiting with a timeout returns while it runs")
    func failures() throws {
        let error = #expect(throws: ChildProcess.StartError.self) {
            try ChildProcess(executable: "/nonexistent/program")
        }
        #expect(error?.message.contains("/nonexistent/program") == true)
        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(sleeper.wait(timeout: 0.05) == nil)
        sleeper.signal(SIGKILL)
        #expect(sleeper.wait() == .signaled(SIGKILL))
        let ends = Mutex<[ChildProcess.Termination]>([])
        sleeper.onExit { end in ends.withLock { $0.append(end) } }
        #expect(ends.withLock { $0 } == [.signaled(SIGKILL)])
    }

    @Test(
        "run: standard output and error collected apart or merged, both drained at once, a status that is not 0 reported"
    )
    func runCollects() async throws {
        // 300 kB on standard error before anything on standard output: a reader of one pipe at a
        // time would wait forever on a program blocked writing the other.
        let apart = try await ChildProcess.run(
            "/bin/sh", arguments: ["-c", "head -c 300000 /dev/zero >&2; printf done; exit 4"], timeout: 60)
        #expect(apart.termination == .exited(4))
        #expect(apart.text == "done")
        #expect(apart.standardError.count == 300_000)
        let merged = try await ChildProcess.run(
            "/bin/sh", arguments: ["-c", "printf a; printf b >&2; printf c"], errors: .merged, timeout: 60)
        #expect(merged.termination.succeeded)
        #expect(merged.text == "abc" && merged.standardError.isEmpty)
        let discarded = try await ChildProcess.run(
            "/bin/sh", arguments: ["-c", "printf out; printf err >&2"], errors: .stream(.null), timeout: 60)
        #expect(discarded.text == "out" && discarded.standardError.isEmpty)
    }

    @Test("run: a program past its time is killed and reaped, and the error names it with what it wrote")
    func runTimeout() async throws {
        // 3 s: the shell's echo must come before the time is up, also on a busy machine (0.5 s was
        // a bet on the scheduler); the sleeps are ten times longer.
        let error = #expect(throws: ChildProcess.TimeoutError.self) {
            try ChildProcess.run("/bin/sh", arguments: ["-c", "echo started; exec sleep 30"], timeout: 3)
        }
        #expect(
            error?.description.hasPrefix("/bin/sh did not finish within 3 s") == true,
            "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.partialOutput == "started\n")
        // A program it left behind holding the output open counts as running.
        let held = await #expect(throws: ChildProcess.TimeoutError.self) {
            try await ChildProcess.run("/bin/sh", arguments: ["-c", "sleep 30 & echo left"], timeout: 3)
        }
        #expect(held?.partialOutput == "left\n")
        #expect(throws: ChildProcess.StartError.self) { try ChildProcess.run("/nonexistent/program", timeout: 1) }
    }
}
