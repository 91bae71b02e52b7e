// A helper for the kill -9 durability test (Tests/ChimeSQLiteTests/CrashDurabilityTests.swift):
// adds requests to a SQLite store, one transaction each, as fast as it can, and prints each
// identifier once its transaction has committed. The test kills it at a random moment and checks
// that every identifier printed is in the store, intact.
//
// Usage: ChimeStoreCrasher <store path> <identifier prefix>
import ChimeCore
import ChimeSQLite
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: ChimeStoreCrasher <store path> <identifier prefix>\n".utf8))
    exit(2)
}
let store: SQLiteStore
do {
    store = try SQLiteStore(path: arguments[1])
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
let prefix = arguments[2]
let anchor = Date(timeIntervalSince1970: 1_800_000_000)
var index = 0
while true {
    let identifier = "\(prefix)-\(index)"
    var content = NotificationContent(title: "Crash \(identifier)", body: String(repeating: "durable ", count: 20))
    content.userInfo = ["id": .string(identifier), "n": .integer(Int64(index)), "blob": .data(Data(identifier.utf8))]
    let request = NotificationRequest(
        identifier: identifier, content: content, trigger: .timeInterval(60, repeats: false))
    let pending = PendingRequest(
        request: request, nextFireDate: anchor.addingTimeInterval(60 + Double(index)), anchor: anchor)
    do {
        try store.transaction { try store.putPending(pending, app: "com.example.crash") }
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
    // Unbuffered: the line leaves the process as soon as the commit has returned.
    FileHandle.standardOutput.write(Data("\(identifier)\n".utf8))
    index += 1
}
