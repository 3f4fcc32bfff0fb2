import CNVRPlugin

/// A plugin camera that lists camera-side recordings (card or cloud; nvr_plugin.h, card_list).
public protocol CardLister: AnyObject {
    /// The recordings as card_list's JSON.
    func cardList() throws -> String
}

/// A plugin camera that can also read its card's files (card_read).
public protocol CardCamera: CardLister {
    /// Streams a byte range of one file to `sink` (false cancels); false when cancelled.
    func cardRead(id: String, offset: Int64, length: Int64, sink: (UnsafeRawBufferPointer) -> Bool) throws -> Bool
}

private let cardList:
    @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) ->
        UnsafeMutablePointer<CChar>? = { p, errorOut in
            guard let p, let cam = Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue() as? any CardLister else {
                return nil
            }
            do { return makeCString(try cam.cardList()) } catch {
                reportError(error, errorOut)
                return nil
            }
        }

/// The card functions of a plugin that only lists (its instances conform to CardLister).
public let cardListerFunctions = nvr_card_functions(card_list: cardList, card_read: nil)

/// The entry struct's card functions for plugins whose instances (created with
/// `Unmanaged.passRetained`) conform to CardCamera.
public let cardCameraFunctions = nvr_card_functions(
    card_list: cardList,
    card_read: { p, id, offset, length, sink, ctx, errorOut in
        guard let p, let id, let sink,
            let cam = Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue() as? any CardCamera
        else { return -1 }
        do {
            let done = try cam.cardRead(id: String(cString: id), offset: offset, length: length) { chunk in
                sink(ctx, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count) == 0
            }
            return done ? 0 : 1
        } catch {
            reportError(error, errorOut)
            return -1
        }
    })
