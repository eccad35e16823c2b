"""The rehearsal's driver (:class:`lexgold.annotate.browser.Browser`) sends requests and keeps
cookies as a browser does (RFC 6265 section 5.3, RFC 9110 section 15.4)."""

from flask import Flask, make_response, redirect, request

from lexgold.annotate.browser import Browser


def _app():
    app = Flask("driver")

    @app.post("/form")
    def form():
        response = redirect("/seen?from=form")
        response.set_cookie("kept", request.form.get("value", ""))
        return response

    @app.get("/seen")
    def seen():
        return f"{request.method} {request.args.get('from')} {request.cookies.get('kept')} " \
               f"{request.referrer}"

    @app.post("/again")
    def again():
        return redirect("/echo", code=307)

    @app.post("/echo")
    def echo():
        return f"{request.method} {request.form.get('value')}"

    @app.get("/cookies")
    def cookies():
        response = make_response("set")
        response.set_cookie("scoped", "1", path="/inner")
        response.set_cookie("secure", "1", secure=True)
        response.set_cookie("kept", "", expires=0)
        return response

    @app.get("/inner/look")
    def inner():
        return ",".join(sorted(request.cookies))

    @app.get("/look")
    def look():
        return ",".join(sorted(request.cookies))

    return app


def test_a_posted_form_is_redirected_to_a_get_carrying_its_cookie_and_referer():
    browser = Browser(_app())
    response = browser.post("/form", {"value": "a b&c"}, referer="/page?x=1")
    assert response.status == 200 and response.url == "/seen?from=form"
    assert response.text() == "GET form a b&c http://localhost/page?x=1"
    assert browser.requests == 2 and browser.cookie("kept") == "\"a b&c\""   # sent back as set


def test_a_307_repeats_the_post_with_its_body():
    browser = Browser(_app())
    assert browser.post("/again", {"value": "7"}).text() == "POST 7"
    assert browser.requests == 2


def test_cookies_are_removed_scoped_to_their_path_and_never_secure_over_http():
    browser = Browser(_app())
    browser.post("/form", {"value": "x"})
    assert browser.get("/look").text() == "kept"
    assert browser.get("/cookies").text() == "set"
    assert browser.cookie("kept") is None and browser.cookie("secure") is None
    assert browser.get("/look").text() == ""
    assert browser.get("/inner/look").text() == "scoped"


def test_a_form_body_is_urlencoded():
    from urllib.parse import urlencode

    from lexgold.annotate.browser import form_body

    for data in ({"csrf_token": "Ij.a-b_c~d", "r12": "3", "t12": ""},
                 {"consent": "yes", "a b": "x&y=z", "é": "ü+", "n": 7}):
        assert form_body(data) == urlencode(data).encode("ascii")
