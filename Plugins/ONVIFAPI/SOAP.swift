/// SOAP 1.2 envelopes with the namespaces ONVIF requests use.
public enum SOAP {
    static let namespaces = [
        "s": "http://www.w3.org/2003/05/soap-envelope",
        "wsse": "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd",
        "wsu": "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd",
        "wsa": "http://www.w3.org/2005/08/addressing",
        "tds": "http://www.onvif.org/ver10/device/wsdl",
        "trt": "http://www.onvif.org/ver10/media/wsdl",
        "tev": "http://www.onvif.org/ver10/events/wsdl",
        "tptz": "http://www.onvif.org/ver20/ptz/wsdl",
        "tt": "http://www.onvif.org/ver10/schema",
        "wsnt": "http://docs.oasis-open.org/wsn/b-2",
    ]

    public static func envelope(body: String, header: String = "") -> String {
        let ns = namespaces.sorted { $0.key < $1.key }.map { "xmlns:\($0.key)=\"\($0.value)\"" }.joined(separator: " ")
        return
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><s:Envelope \(ns)><s:Header>\(header)</s:Header><s:Body>\(body)</s:Body></s:Envelope>"
    }

    /// Text for an element or attribute.
    public static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }
}
