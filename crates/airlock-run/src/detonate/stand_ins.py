"""Stand-ins for the Python modules a detonated skill imports but the sandbox lacks.

A detonation skips the install phase (nothing leaves the machine), so a script that imports a third-party module
would stop at its first line and show nothing of what it does. Loaded at start-up (as `sitecustomize`), this adds a
finder after every real one: a module no real finder has is stood in for. The common HTTP clients (`requests`,
`httpx`, `urllib3`) are stood in for by working ones built on the standard library, so what a script sends reaches
the sinkhole as it would have; any other missing module is an object that accepts every call and attribute, so the
script goes on to its next line. Each stand-in is named on stderr.
"""

import importlib.abc
import importlib.machinery
import json as _json
import sys
import types
import urllib.error
import urllib.parse
import urllib.request

_HTTP_CLIENTS = ("requests", "httpx", "urllib3")


class _Closable:
    """What is opened and closed, and used in a `with` block."""

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False


class _Response(_Closable):
    def __init__(self, status, body, headers, url):
        self.status_code = self.status = status
        self.content = self.data = body
        self.headers = headers
        self.url = url
        self.ok = status < 400
        self.is_success = self.ok

    @property
    def text(self):
        return self.content.decode("utf-8", "replace")

    def json(self, **_):
        return _json.loads(self.content or b"null")

    def raise_for_status(self):
        if not self.ok:
            raise HTTPError(f"{self.status_code} for {self.url}")
        return self

    def iter_content(self, chunk_size=1, **_):
        yield self.content

    def iter_lines(self, **_):
        yield from self.content.splitlines()

    def read(self, *_):
        return self.content


class RequestException(IOError):
    pass


class HTTPError(RequestException):
    pass


class ConnectionError(RequestException):  # noqa: A001 - the clients' own name
    pass


class Timeout(RequestException):
    pass


def _body(data=None, json=None, files=None, body=None, fields=None, content=None):
    if json is not None:
        return _json.dumps(json).encode(), "application/json"
    out = b""
    kind = None
    for part in (data, body, content, fields):
        if part is None:
            continue
        if isinstance(part, dict):
            out += urllib.parse.urlencode(part, doseq=True).encode()
            kind = "application/x-www-form-urlencoded"
        elif isinstance(part, str):
            out += part.encode()
        elif isinstance(part, (bytes, bytearray)):
            out += bytes(part)
        elif hasattr(part, "read"):
            chunk = part.read()
            out += chunk.encode() if isinstance(chunk, str) else chunk
        else:
            out += str(part).encode()
    for value in (files or {}).values():
        if isinstance(value, tuple):
            value = value[1] if len(value) > 1 else value[0]
        chunk = value.read() if hasattr(value, "read") else value
        out += chunk.encode() if isinstance(chunk, str) else bytes(chunk)
    return (out or None), kind


def request(method, url, params=None, data=None, json=None, headers=None, files=None, timeout=None,
            body=None, fields=None, content=None, **_):
    url = str(url)
    if params:
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params, doseq=True)
    payload, kind = _body(data, json, files, body, fields, content)
    hdrs = {str(k): str(v) for k, v in dict(headers or {}).items()}
    if kind:
        hdrs.setdefault("Content-Type", kind)
    req = urllib.request.Request(url, data=payload, headers=hdrs, method=str(method).upper())
    try:
        with urllib.request.urlopen(req, timeout=timeout if isinstance(timeout, (int, float)) else 5) as r:
            return _Response(r.status, r.read(), dict(r.headers), url)
    except urllib.error.HTTPError as e:
        return _Response(e.code, e.read(), dict(e.headers or {}), url)
    except OSError as e:
        raise ConnectionError(str(e)) from None


def _verb(name):
    def call(url, *args, **kwargs):
        if args:
            kwargs.setdefault("data", args[0])
        return request(name, url, **kwargs)

    return call


class Session(_Closable):
    def __init__(self, *_, **kwargs):
        self.headers = dict(kwargs.get("headers") or {})
        for name in ("get", "post", "put", "patch", "delete", "head", "options"):
            setattr(self, name, self._bound(name))

    def _bound(self, name):
        def call(url, *args, **kwargs):
            kwargs["headers"] = {**self.headers, **dict(kwargs.get("headers") or {})}
            return _verb(name)(url, *args, **kwargs)

        return call

    def request(self, method, url, **kwargs):
        return self._bound(method)(url, **kwargs)


class AsyncClient(Session):
    def _bound(self, name):
        sync = super()._bound(name)

        async def call(url, *args, **kwargs):
            return sync(url, *args, **kwargs)

        return call

    async def aclose(self):
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *_):
        return False


class PoolManager:
    def __init__(self, *_, **kwargs):
        self.headers = dict(kwargs.get("headers") or {})

    def request(self, method, url, **kwargs):
        kwargs["headers"] = {**self.headers, **dict(kwargs.get("headers") or {})}
        return request(method, url, **kwargs)

    urlopen = request


def _http_client(name):
    module = types.ModuleType(name)
    for verb in ("get", "post", "put", "patch", "delete", "head", "options"):
        setattr(module, verb, _verb(verb))
    module.request = request
    module.Session = module.session = module.Client = Session
    module.AsyncClient = AsyncClient
    module.PoolManager = PoolManager
    module.Response = _Response
    module.RequestException = module.HTTPError = HTTPError
    module.ConnectionError = module.ConnectError = ConnectionError
    module.Timeout = module.TimeoutException = module.ReadTimeout = Timeout
    exceptions = types.ModuleType(f"{name}.exceptions")
    for attr in ("RequestException", "HTTPError", "ConnectionError", "Timeout"):
        setattr(exceptions, attr, globals()[attr])
    module.exceptions = exceptions
    module.__path__ = []
    return module


class _Anything(type):
    """A class whose every attribute is another stand-in: `lib.Client(...).upload(...)` goes on."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stand


class _Stand(metaclass=_Anything):
    def __init__(self, *_, **__):
        pass

    def __call__(self, *_, **__):
        return _Stand()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stand()

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __getitem__(self, _):
        return _Stand()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False

    def __str__(self):
        return ""


class _StandModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stand


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        top = spec.name.split(".")[0]
        if top in _HTTP_CLIENTS:
            module = _http_client(spec.name)
        else:
            module = _StandModule(spec.name)
            module.__path__ = []
        sys.stderr.write(f"airlock detonation: `{spec.name}` is not in the sandbox; a stand-in is used\n")
        return module

    def exec_module(self, module):
        pass


def _imported_by_the_skill():
    """Whether the import comes from the skill's code (its folder, the project it works in, a `-c` program), not
    from an installed library probing for an optional module of its own."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<frozen") and "importlib" not in name:
            return name.startswith(_OWN) or name.startswith("<")
        frame = frame.f_back
    return False


_OWN = ("/skill/", "/workspace/", "/tmp/")


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        # Only what no real finder has (this finder is the last), only for the skill's own imports, and never the
        # standard library's own optional modules.
        if name.split(".")[0] in sys.stdlib_module_names or name.startswith("_"):
            return None
        if "." not in name and not _imported_by_the_skill():
            return None
        return importlib.machinery.ModuleSpec(name, _Loader(), is_package=True)


sys.meta_path.append(_Finder())
