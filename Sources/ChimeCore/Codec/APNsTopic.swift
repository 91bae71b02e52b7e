/// `apns-topic` read as Apple documents it ("Sending notification requests to APNs"): the app's
/// bundle identifier, with a suffix for the push types Apple delivers on a channel of their own.
///
/// | push type | topic |
/// |---|---|
/// | `alert`, `background`, `mdm` | the bundle identifier |
/// | `voip` | bundle identifier + `.voip` |
/// | `complication` | bundle identifier + `.complication` |
/// | `fileprovider` | bundle identifier + `.pushkit.fileprovider` |
/// | `location` | bundle identifier + `.location-query` |
/// | `liveactivity` | bundle identifier + `.push-type.liveactivity` |
/// | `pushtotalk` | bundle identifier + `.voip-ptt` |
/// | `widgets` | bundle identifier + `.push-type.widgets` |
/// | `controls` | bundle identifier + `.push-type.controls` |
///
/// ```swift
/// let topic = APNsTopic("com.example.call.voip")
/// topic.bundleIdentifier   // "com.example.call"
/// topic.suffixPushType     // .voip
/// try topic.pushType(given: nil)     // .voip: the topic's type when the header is absent
/// try topic.pushType(given: .alert)  // throws InvalidPushType: an alert goes to "com.example.call"
/// ```
public struct APNsTopic: Sendable, Hashable {
    public typealias PushType = APNsRequestHeaders.PushType

    /// The topic as given.
    public var text: String
    /// The app the topic names: the topic without its suffix.
    public var bundleIdentifier: String
    /// The push type the topic's suffix is for; `nil` for a bare bundle identifier.
    public var suffixPushType: PushType?

    /// Splits a known suffix off `topic`; a topic without one is a bundle identifier.
    public init(_ topic: String) {
        text = topic
        bundleIdentifier = topic
        suffixPushType = nil
        for type in PushType.allCases {
            guard let suffix = Self.suffix(for: type), topic.utf8.count > suffix.utf8.count, topic.hasSuffix(suffix)
            else { continue }
            bundleIdentifier = String(topic.dropLast(suffix.count))
            suffixPushType = type
            return
        }
    }

    /// A topic that is the bundle identifier `bundleIdentifier` as it stands, whatever its ending
    /// (an app registered under a name that ends like a suffix).
    public init(bundleIdentifier: String) {
        text = bundleIdentifier
        self.bundleIdentifier = bundleIdentifier
        suffixPushType = nil
    }

    /// The suffix Apple appends to the bundle identifier for `type`; `nil` when the topic is the
    /// bundle identifier itself.
    public static func suffix(for type: PushType) -> String? {
        switch type {
        case .alert, .background, .mdm: nil
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .location: ".location-query"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The topic a push of `type` to the app `bundleIdentifier` must carry.
    public static func topic(for type: PushType, bundleIdentifier: String) -> String {
        bundleIdentifier + (suffix(for: type) ?? "")
    }

    /// The push type of a push to this topic: `given` (the `apns-push-type` header) when the topic
    /// is the one Apple asks for it; without the header, the type the topic's suffix is for, else
    /// `alert` (as Apple delivered pushes before the header existed).
    ///
    /// - Throws: ``APNsHeaderError`` `InvalidPushType` (400, header `apns-push-type`) when the topic
    ///   is not the one `given` needs, naming the topic it needs.
    public func pushType(given: PushType?) throws(APNsHeaderError) -> PushType {
        guard let given else { return suffixPushType ?? .alert }
        let needed = Self.suffix(for: given)
        guard needed == suffixPushType.flatMap(Self.suffix(for:)) else {
            throw APNsHeaderError(
                reason: "InvalidPushType", header: "apns-push-type",
                message:
                    "apns-push-type \(given.rawValue) needs apns-topic \(Self.topic(for: given, bundleIdentifier: bundleIdentifier).prefix(300)), not \(text.prefix(300))"
            )
        }
        return given
    }

    /// What the device does with a push.
    public enum Delivery: Sendable, Hashable {
        /// Shown as a notification (unless the payload has nothing to show: then as ``toApp``).
        case shown
        /// Handed to the app, never shown: a background push, and the push types iOS hands to
        /// PushKit, Core Location, WidgetKit and the like, which Chime has not.
        case toApp
        /// Dropped: a background push without `content-available: 1` wakes nothing on iOS.
        case dropped
    }

    /// What the device does with a push of `type` carrying `payload`: `alert` and `liveactivity`
    /// (whose `alert` lights the screen) are shown as the payload says (a payload with only
    /// `content-available` goes to the app); `background` goes to the app when it has
    /// `content-available: 1` and is dropped otherwise; every other type goes to the app.
    public static func delivery(of type: PushType, payload: APNsPayload) -> Delivery {
        switch type {
        case .alert, .liveactivity: payload.isSilent ? .toApp : .shown
        case .background: payload.isContentAvailable ? .toApp : .dropped
        case .location, .voip, .complication, .fileprovider, .mdm, .pushtotalk, .widgets, .controls: .toApp
        }
    }
}
