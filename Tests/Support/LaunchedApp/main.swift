import Chime
import ChimeCore
import Foundation

// A stand-in app for the background-launch tests, started by `chime serve` with CHIME_SERVICE,
// CHIME_APP_TOKEN, CHIME_BUNDLE_IDENTIFIER and CHIME_LAUNCH_REASON set.
//
//   chime-launched-app RECORD MODE
//
// RECORD gets a line `launch reason=… bundle=… token=…` at start and a line `answer ID ACTION TEXT`
// for each answer handed to the delegate. MODE is the path of a file holding what to do this time:
// `handle` (take the waiting answers, then exit 0), `fail` (exit 3 at once), `hang` (never finish),
// `wait` (after start, wait until the file RECORD.go exists — the test's signal, at most 60 s —
// then handle; answers given meanwhile wait in the outbox for this process).
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: chime-launched-app RECORD MODE\n".utf8))
    exit(2)
}
let record = arguments[1]
let mode =
    (try? String(contentsOfFile: arguments[2], encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    ?? "handle"

func append(_ line: String) {
    let handle =
        FileHandle(forWritingAtPath: record)
        ?? {
            _ = FileManager.default.createFile(atPath: record, contents: nil)
            return FileHandle(forWritingAtPath: record)!
        }()
    handle.seekToEndOfFile()
    handle.write(Data((line + "\n").utf8))
    try? handle.close()
}

let environment = ProcessInfo.processInfo.environment
append(
    "launch reason=\(UNUserNotificationCenter.launchReason?.rawValue ?? "none") bundle=\(environment["CHIME_BUNDLE_IDENTIFIER"] ?? "") token=\(environment["CHIME_APP_TOKEN"] ?? "")"
)
print("started in mode \(mode)")

final class Handler: UNUserNotificationCenterDelegate {
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        let text = (response as? UNTextInputNotificationResponse)?.userText ?? ""
        append("answer \(response.notification.request.identifier) \(response.actionIdentifier) \(text)")
    }
}

switch mode {
case "fail":
    print("failing on purpose")
    exit(3)
case "hang":
    try await Sleep.for(.seconds(600))
case "wait":
    let go = record + ".go"
    let deadline = ContinuousClock.now + .seconds(60)
    while !FileManager.default.fileExists(atPath: go), ContinuousClock.now < deadline {
        try await Sleep.for(.milliseconds(20))
    }
default:
    break
}
let handler = Handler()
let center = UNUserNotificationCenter.current()
center.delegate = handler
await center.handleWaitingResponses()
exit(0)
