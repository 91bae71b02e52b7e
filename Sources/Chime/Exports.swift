// Apple's option sets, enums, identifiers and `UNError` are plain values defined in ChimeCore;
// `import Chime` brings them in with the classes, as `import UserNotifications` does.
@_exported import ChimeCore
@_exported import Foundation
