import ProxyModel

extension FilterExpression {
    /// What `matches` will say of `flow` once its response has come, decided from its request
    /// alone where it can be: true or false when no predicate the response could change decides
    /// it, nil when one might.
    ///
    /// It exists so that a breakpoint filter costs an exchange nothing after its request when the
    /// answer is already known (`~d api.test & ~m POST` on a GET to another host): the engine
    /// need not prepare to hold the response, nor ask again. Predicates that can change with the
    /// response — `~s`, `~q`, `~c`, `~e`, `~rule`, response headers and content types, and every
    /// body (the request's too: a request is decided by its head) — are unknown here;
    /// `and`, `or` and `not` combine unknowns the three-valued way (false and unknown is false).
    public func verdictBeforeResponse(_ flow: Flow) -> Bool? {
        switch self {
        case .and(let left, let right):
            let first = left.verdictBeforeResponse(flow)
            if first == false { return false }
            let second = right.verdictBeforeResponse(flow)
            if second == false { return false }
            return first == true && second == true ? true : nil
        case .or(let left, let right):
            let first = left.verdictBeforeResponse(flow)
            if first == true { return true }
            let second = right.verdictBeforeResponse(flow)
            if second == true { return true }
            return first == false && second == false ? false : nil
        case .not(let operand):
            return operand.verdictBeforeResponse(flow).map(!)
        case .contentType(_, .request), .header(_, .request):
            return matches(flow)
        case .contentType(let regex, .either):
            return FilterExpression.contentType(regex, .request).matches(flow) ? true : nil
        case .header(let regex, .either):
            return FilterExpression.header(regex, .request).matches(flow) ? true : nil
        case .statusCode, .contentType, .header, .body, .fullText, .rule, .requestWithoutResponse, .hasResponse, .hasError:
            return nil
        case .domain, .url, .method, .marked, .replay, .websocket, .http, .http2, .tunnel, .all, .proxy:
            return matches(flow)
        }
    }
}
