import Chime
import Foundation
import TestThreads
import Testing

/// Raw values, identifiers and error codes that code written for iOS depends on.
@Suite("Apple's raw values, identifiers and error codes", .testThreads)
struct AppleRawValueTests {
    @Test(
        "UNAuthorizationOptions have Apple's raw values",
        arguments: [
            (UNAuthorizationOptions.badge, 1), (.sound, 2), (.alert, 4), (.carPlay, 8), (.criticalAlert, 16),
            (.providesAppNotificationSettings, 32), (.provisional, 64), (.timeSensitive, 256),
        ] as [(UNAuthorizationOptions, UInt)])
    func authorizationOptions(option: UNAuthorizationOptions, raw: UInt) {
        #expect(option.rawValue == raw)
        #expect(UNAuthorizationOptions(rawValue: raw) == option)
    }

    @Test(
        "UNAuthorizationStatus has Apple's raw values",
        arguments: [
            (UNAuthorizationStatus.notDetermined, 0), (.denied, 1), (.authorized, 2), (.provisional, 3),
            (.ephemeral, 4),
        ] as [(UNAuthorizationStatus, Int)])
    func authorizationStatus(status: UNAuthorizationStatus, raw: Int) {
        #expect(status.rawValue == raw)
        #expect(UNAuthorizationStatus(rawValue: raw) == status)
    }

    @Test(
        "UNNotificationPresentationOptions have Apple's raw values",
        arguments: [
            (UNNotificationPresentationOptions.badge, 1), (.sound, 2),
            (UNNotificationPresentationOptions(rawValue: 4), 4),
            (.list, 8), (.banner, 16),
        ] as [(UNNotificationPresentationOptions, UInt)])
    func presentationOptions(option: UNNotificationPresentationOptions, raw: UInt) {
        #expect(option.rawValue == raw)
    }

    @available(*, deprecated, message: "reads the deprecated .alert and .allowAnnouncement on purpose")
    @Test("the deprecated .alert presentation option and .allowAnnouncement category option keep their values")
    func deprecatedOptions() {
        #expect(UNNotificationPresentationOptions.alert.rawValue == 4)
        #expect(UNNotificationCategoryOptions.allowAnnouncement.rawValue == 16)
    }

    @Test(
        "UNNotificationActionOptions have Apple's raw values",
        arguments: [
            (UNNotificationActionOptions.authenticationRequired, 1), (.destructive, 2), (.foreground, 4),
        ] as [(UNNotificationActionOptions, UInt)])
    func actionOptions(option: UNNotificationActionOptions, raw: UInt) {
        #expect(option.rawValue == raw)
    }

    @Test(
        "UNNotificationCategoryOptions have Apple's raw values",
        arguments: [
            (UNNotificationCategoryOptions.customDismissAction, 1), (.allowInCarPlay, 2), (.hiddenPreviewsShowTitle, 4),
            (.hiddenPreviewsShowSubtitle, 8), (UNNotificationCategoryOptions(rawValue: 16), 16),
        ] as [(UNNotificationCategoryOptions, UInt)])
    func categoryOptions(option: UNNotificationCategoryOptions, raw: UInt) {
        #expect(option.rawValue == raw)
    }

    @Test(
        "UNNotificationInterruptionLevel has Apple's raw values",
        arguments: [
            (UNNotificationInterruptionLevel.passive, 0), (.active, 1), (.timeSensitive, 2), (.critical, 3),
        ] as [(UNNotificationInterruptionLevel, UInt)])
    func interruptionLevel(level: UNNotificationInterruptionLevel, raw: UInt) {
        #expect(level.rawValue == raw)
        #expect(UNNotificationInterruptionLevel(rawValue: raw) == level)
    }

    @Test(
        "UNNotificationSetting has Apple's raw values",
        arguments: [
            (UNNotificationSetting.notSupported, 0), (.disabled, 1), (.enabled, 2),
        ] as [(UNNotificationSetting, Int)])
    func notificationSetting(setting: UNNotificationSetting, raw: Int) {
        #expect(setting.rawValue == raw)
    }

    @Test(
        "UNAlertStyle has Apple's raw values",
        arguments: [
            (UNAlertStyle.none, 0), (.banner, 1), (.alert, 2),
        ] as [(UNAlertStyle, Int)])
    func alertStyle(style: UNAlertStyle, raw: Int) {
        #expect(style.rawValue == raw)
    }

    @Test(
        "UNShowPreviewsSetting has Apple's raw values",
        arguments: [
            (UNShowPreviewsSetting.always, 0), (.whenAuthenticated, 1), (.never, 2),
        ] as [(UNShowPreviewsSetting, Int)])
    func showPreviews(setting: UNShowPreviewsSetting, raw: Int) {
        #expect(setting.rawValue == raw)
    }

    @Test("the system action identifiers are Apple's exact strings")
    func systemActionIdentifiers() {
        #expect(UNNotificationDefaultActionIdentifier == "com.apple.UNNotificationDefaultActionIdentifier")
        #expect(UNNotificationDismissActionIdentifier == "com.apple.UNNotificationDismissActionIdentifier")
    }

    @Test(
        "UNError codes have Apple's raw values",
        arguments: [
            (UNError.Code.notificationsNotAllowed, 1), (.attachmentInvalidURL, 100), (.attachmentUnrecognizedType, 101),
            (.attachmentInvalidFileSize, 102), (.attachmentNotInDataStore, 103),
            (.attachmentMoveIntoDataStoreFailed, 104),
            (.attachmentCorrupt, 105), (.notificationInvalidNoDate, 1400), (.notificationInvalidNoContent, 1401),
            (.contentProvidingObjectNotAllowed, 1500), (.contentProvidingInvalid, 1501), (.badgeInputInvalid, 1600),
        ] as [(UNError.Code, Int)])
    func errorCodes(code: UNError.Code, raw: Int) throws {
        #expect(code.rawValue == raw)
        let bridged = UNError(code) as NSError
        #expect(bridged.domain == "UNErrorDomain")
        #expect(bridged.code == raw)
        #expect(UNErrorDomain == "UNErrorDomain")
    }

    @Test("a thrown UNError bridges to NSError with Apple's domain and code")
    func thrownErrorBridges() {
        do {
            throw UNError(.notificationsNotAllowed)
        } catch {
            let nsError = error as NSError
            #expect(nsError.domain == "UNErrorDomain")
            #expect(nsError.code == 1)
        }
    }

    @Test("`catch UNError.notificationsNotAllowed` matches only that code")
    func catchPattern() {
        func matches(_ error: any Error) -> String {
            do { throw error } catch UNError.notificationsNotAllowed {
                return "notAllowed"
            } catch UNError.badgeInputInvalid {
                return "badge"
            } catch {
                return "other"
            }
        }
        #expect(matches(UNError(.notificationsNotAllowed)) == "notAllowed")
        #expect(matches(UNError(.badgeInputInvalid)) == "badge")
        #expect(matches(CocoaError(.fileNoSuchFile)) == "other")
    }
}
