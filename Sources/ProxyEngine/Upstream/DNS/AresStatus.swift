import CAres

/// c-ares's status codes in words, so a client and the flow read what went wrong with DNS
/// ("the DNS server refused the query"), never c-ares's enum names or its own phrases.
enum AresStatus {
    /// The lookup failure for a c-ares status other than `ARES_SUCCESS`.
    static func error(for status: Int32) -> NameLookupError {
        switch status {
        case ARES_ETIMEOUT:
            return .noAnswer
        case ARES_ENOTFOUND, ARES_ENONAME:
            return .failed(reason: "no such name in DNS (NXDOMAIN)")
        case ARES_ENODATA:
            return .failed(reason: "the name has no IPv4 or IPv6 address")
        case ARES_ESERVFAIL:
            return .failed(reason: "the DNS server could not answer (SERVFAIL)")
        case ARES_EREFUSED:
            return .failed(reason: "the DNS server refused the query")
        case ARES_EFORMERR, ARES_ENOTIMP:
            return .failed(reason: "the DNS server did not understand the query")
        case ARES_EBADRESP:
            return .failed(reason: "the DNS server sent a malformed answer")
        case ARES_ECONNREFUSED:
            // c-ares also ends here when every server answered SERVFAIL or REFUSED (it tries
            // the next server on those, as glibc does, and reports them all this way).
            return .failed(reason: "no DNS server would answer: each refused, failed or could not be reached")
        case ARES_EOF:
            return .failed(reason: "the DNS server closed the connection")
        case ARES_EBADNAME, ARES_EBADQUERY, ARES_EBADSTR:
            return .failed(reason: "not a name DNS can look up")
        case ARES_EFILE:
            return .failed(reason: "cannot read the DNS configuration (/etc/resolv.conf, /etc/hosts)")
        case ARES_ENOMEM:
            return .failed(reason: "out of memory")
        case ARES_EDESTRUCTION, ARES_ECANCELLED:
            return .failed(reason: "the proxy is shutting down")
        default:
            return .failed(reason: "the DNS lookup failed (c-ares status \(status))")
        }
    }
}
