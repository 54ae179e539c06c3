import anyio, pytest, json
import tasks_kit as kit
from test_tasks import http, legacy, error_code  # noqa
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

async def test_probe(http):
    old = await legacy(http)
    for task in ({"ttl": "abc"}, {"ttl": 1e308}, {"ttl": -5}, {"ttl": True}, {"ttl": 1.5}, {"x": 1}, {"ttl": None}):
        a = await old.call("report", {"steps": 0}, task=task)
        print(task, json.dumps(a)[:250])
    for p in ({"taskId": ["x"]}, {"taskId": None}, {}, {"taskId": "x", "cursor": 5}):
        print(p, json.dumps(await old.send("tasks/get", p))[:200])
    print(json.dumps(await old.send("tasks/list", {"cursor": "LTE="}))[:200])
    print(json.dumps(await old.send("tasks/list", {"cursor": base64(10**30)}))[:200])
    print(json.dumps(await old.send("tasks/list", {"cursor": 5}))[:200])

def base64(n):
    import base64 as b
    return b.urlsafe_b64encode(str(n).encode()).decode()
