-- wrk script used by scripts/bench: load an HTTP proxy the way a proxy-configured client does.
--
--   wrk [options] -s wrk-absolute-form.lua http://PROXY_HOST:PORT/ -- http://ORIGIN_HOST:PORT/path
--
-- wrk opens its connections to the URL on its command line (the proxy). Every request it sends
-- carries the URL given after `--` in absolute form ("GET http://origin/path HTTP/1.1") with a
-- Host header naming the origin, so the proxy forwards it there.

function init(args)
  local target = args[1]
  local authority = target and target:match("^http://([^/]+)/")
  if not authority then
    error("usage: wrk ... -s wrk-absolute-form.lua http://PROXY/ -- http://ORIGIN/path")
  end
  -- wrk formats its request once, after init() returns, from these fields.
  wrk.path = target
  wrk.headers["Host"] = authority
end
