/// Logins an origin ties to the TCP connection rather than to each request: NTLM and Negotiate
/// (Kerberos/SPNEGO). After one, every later request on that connection runs as the logged-in
/// user, so a proxy must never hand such a connection to another client (HAProxy's
/// `http-reuse safe` rule; mitmproxy never shares server connections at all).
public enum ConnectionBoundAuth {
    /// Whether an exchange with these request `Authorization` values and response
    /// `WWW-Authenticate` values binds its upstream connection to the client connection.
    public static func binds<Values: Sequence>(authorization: Values, wwwAuthenticate: Values) -> Bool
        where Values.Element == String {
        authorization.contains(where: isBoundScheme) || wwwAuthenticate.contains(where: isBoundScheme)
    }

    /// Whether a credentials or challenge value starts with the scheme NTLM or Negotiate (any
    /// case; a challenge list may name several schemes, so every comma-separated part counts).
    public static func isBoundScheme(_ value: String) -> Bool {
        for part in value.split(separator: ",") {
            let scheme = part.drop(while: { $0 == " " || $0 == "\t" }).prefix(while: { $0 != " " && $0 != "\t" })
            if String(scheme).equalsIgnoringASCIICase("ntlm") || String(scheme).equalsIgnoringASCIICase("negotiate") {
                return true
            }
        }
        return false
    }
}
