/// A PullPoint subscription to a camera's events (ONVIF Core, "Real-time Pull-Point
/// Notification Interface"): created on the event service, then pulled, renewed and ended at
/// the address the camera gives it.
public final class PullPointSubscription: @unchecked Sendable {
    // @unchecked Sendable: immutable; the client is thread-safe.
    public let address: String
    private let client: ONVIFClient

    static let pullAction = "http://www.onvif.org/ver10/events/wsdl/PullPointSubscription/PullMessagesRequest"
    static let renewAction = "http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/RenewRequest"
    static let unsubscribeAction = "http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/UnsubscribeRequest"

    /// Subscribes for `seconds` (renew before they run out).
    public init(client: ONVIFClient, events: String, seconds: Int) throws {
        self.client = client
        let r = try client.call(
            events,
            "<tev:CreatePullPointSubscription><tev:InitialTerminationTime>PT\(seconds)S"
                + "</tev:InitialTerminationTime></tev:CreatePullPointSubscription>")
        guard let address = r.text("SubscriptionReference", "Address"), !address.isEmpty else {
            throw ONVIFError(.malformed, "CreatePullPointSubscription: no subscription address in the answer")
        }
        self.address = address
    }

    /// Waits up to `seconds` for messages (the camera answers as soon as it has one).
    public func pull(seconds: Int, limit: Int = 32) throws -> [ONVIFNotification] {
        let r = try client.call(
            address,
            "<tev:PullMessages><tev:Timeout>PT\(seconds)S</tev:Timeout><tev:MessageLimit>\(limit)"
                + "</tev:MessageLimit></tev:PullMessages>", action: Self.pullAction, timeout: Double(seconds) + 10)
        return r.all("NotificationMessage").map(ONVIFNotification.init)
    }

    public func renew(seconds: Int) throws {
        _ = try client.call(
            address, "<wsnt:Renew><wsnt:TerminationTime>PT\(seconds)S</wsnt:TerminationTime></wsnt:Renew>",
            action: Self.renewAction)
    }

    /// Ends it; a camera that does not answer is left to let it expire.
    public func unsubscribe() {
        _ = try? client.call(address, "<wsnt:Unsubscribe/>", action: Self.unsubscribeAction, timeout: 2)
    }
}
