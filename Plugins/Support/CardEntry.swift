import CNVRPlugin

/// A plugin camera that can list and read its memory card (nvr_plugin.h, card_list/card_read).
public protocol CardCamera: AnyObject {
    /// The card's videos as card_list's JSON.
    func cardList() throws -> String
    /// Streams a byte range of one file to `sink` (false cancels); false when cancelled.
    func cardRead(id: String, offset: Int64, length: Int64, sink: (UnsafeRawBufferPointer) -> Bool) throws -> Bool
}

/// The entry struct's card functions for plugins whose instances (created with
/// `Unmanaged.passRetained`) conform to CardCamera.
public let cardCameraFunctions = nvr_card_functions(
    card_list: { p, errorOut in
        guard let p, let cam = Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue() as? any CardCamera else { return nil }
        do { return makeCString(try cam.cardList()) } catch {
            reportError(error, errorOut)
            return nil
        }
    },
    card_read: { p, id, offset, length, sink, ctx, errorOut in
        guard let p, let id, let sink, let cam = Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue() as? any CardCamera else { return -1 }
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
