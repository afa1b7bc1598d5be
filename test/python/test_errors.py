"""HTTP answers to exceptions: a class per status, the server's message, a spec's problems."""
import json

import pytest

import cerebro
from cerebro.errors import error_from_answer


def answer(status, message, **extra):
    return json.dumps(dict({"error": message, "status": status}, **extra)).encode()


@pytest.mark.parametrize("status,cls", [(401, cerebro.AuthError), (403, cerebro.Forbidden), (404, cerebro.NotFound),
                                        (409, cerebro.Conflict), (400, cerebro.BadRequest), (413, cerebro.TooLarge),
                                        (429, cerebro.Throttled), (503, cerebro.Unavailable),
                                        (500, cerebro.CerebroError), (405, cerebro.CerebroError)])
def test_each_status_has_its_class_with_the_servers_message(status, cls):
    body = answer(status, "what went wrong")
    e = error_from_answer(status, body, "GET /api/v1/x")
    assert type(e) is cls
    assert isinstance(e, cerebro.CerebroError)
    assert (e.status, e.message, e.body, str(e)) == (status, "what went wrong", body, "what went wrong")


def test_a_bad_spec_carries_the_servers_structured_problems():
    problems = [{"message": "[experiment] epochs must be an integer >= 1, got string \"3\"",
                 "key": "[experiment] epochs", "line": 3, "column": 10},
                {"message": "[data] source is required", "key": "[data] source", "line": None, "column": None}]
    e = error_from_answer(400, answer(400, "the request body:3:10: ...\nthe request body: ...", problems=problems),
                          "POST /api/v1/experiments", spec=True)
    assert isinstance(e, cerebro.SpecError) and isinstance(e, cerebro.BadRequest)
    assert e.problems == problems
    assert (e.key, e.line, e.column) == ("[experiment] epochs", 3, 10)


def test_a_bad_spec_without_the_field_is_read_from_its_message():
    text = ("the request body:3:10: [experiment] epochs must be an integer >= 1, got string \"3\"\n"
            "the request body:7:1: unknown key 'lrr' in [space] (did you mean 'lr'?)\n"
            "the request body: [data] source is required")
    e = error_from_answer(400, answer(400, text), "POST /api/v1/experiments", spec=True)
    assert isinstance(e, cerebro.SpecError)
    assert [(p["key"], p["line"], p["column"]) for p in e.problems] == [
        ("[experiment] epochs", 3, 10), ("[space] lrr", 7, 1), (None, None, None)]
    assert (e.key, e.line) == ("[experiment] epochs", 3)


def test_any_400_with_problems_is_a_spec_error_and_other_400s_are_bad_requests():
    assert isinstance(error_from_answer(400, answer(400, "x", problems=[{"message": "x"}]), "POST /x"),
                      cerebro.SpecError)
    e = error_from_answer(400, answer(400, "the body is not valid JSON"), "POST /x")
    assert type(e) is cerebro.BadRequest


def test_an_answer_that_is_not_json_keeps_its_text():
    e = error_from_answer(502, b"<html>Bad gateway</html>", "GET /api/v1/experiments")
    assert type(e) is cerebro.CerebroError
    assert e.message == "<html>Bad gateway</html>"



def test_an_answer_without_a_message_names_the_request():
    assert error_from_answer(500, b"", "GET /api/v1/agents").message == "GET /api/v1/agents: HTTP 500 with no message"
