"""Smoke test of the python client generated from Tally's OpenAPI document.

Run by `npm run clients:check` against a started Tally (TALLY_URL, TALLY_API_KEY) with the
generated package `tally_client` on PYTHONPATH: create a prompt (its version 1.0), log a
request, find its session, create a webhook and rotate its key, and create an export. Exits
non-zero at the first step that does not answer as it should.
"""

import os
import random
import string
import sys
import time
from datetime import datetime, timedelta, timezone

import tally_client
from tally_client.models import (
    CreateExportRequest,
    CreatePromptRequest,
    CreateWebhookRequest,
    LogEvent,
    LogRequestsRequest,
    QuerySessionsRequest,
)

RUN = "".join(random.choices(string.ascii_lowercase + string.digits, k=8))


def check(ok: bool, what: str) -> None:
    if not ok:
        sys.exit(f"smoke (python): {what}")
    print(f"python: {what}")


def main() -> None:
    config = tally_client.Configuration(host=os.environ["TALLY_URL"], access_token=os.environ["TALLY_API_KEY"])
    with tally_client.ApiClient(config) as client:
        prompt = tally_client.PromptsApi(client).create_prompt(
            CreatePromptRequest.from_dict(
                {
                    "name": f"smoke-python-{RUN}",
                    "promptBody": {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "Say hi."}]},
                }
            )
        )
        check(prompt.error is None and bool(prompt.data.version_id), "created a prompt and its version 1.0")

        session_id = f"smoke-python-{RUN}"
        event = LogEvent.from_dict(
            {
                "model": "gpt-4o-mini",
                "provider": "openai",
                "session_id": session_id,
                "request": {"messages": [{"role": "user", "content": "Hi"}]},
                "response": {"choices": []},
            }
        )
        logged = tally_client.RequestsApi(client).log_requests(LogRequestsRequest(event))
        check(len(logged.data.request_ids) == 1, "logged a request")

        sessions = tally_client.SessionsApi(client)
        deadline = time.monotonic() + 30
        while True:
            query = QuerySessionsRequest.from_dict(
                {
                    "timeFilter": {"startTimeUnixMs": 0, "endTimeUnixMs": int(time.time() * 1000) + 60_000},
                    "timezoneDifference": 0,
                    "search": session_id,
                    "filter": {},
                }
            )
            found = sessions.query_sessions(query)
            if any(s.session_id == session_id for s in found.data):
                break
            if time.monotonic() > deadline:
                sys.exit(f"smoke (python): session {session_id} not found in 30 s")
            time.sleep(0.2)
        check(True, "found the session of the request")

        webhooks = tally_client.WebhooksApi(client)
        created = webhooks.create_webhook(CreateWebhookRequest(destination="https://127.0.0.1:9/smoke"))
        rotated = webhooks.rotate_webhook_key(str(created.data.id))
        check(
            bool(rotated.data.hmac_key) and rotated.data.hmac_key != created.data.hmac_key,
            "created a webhook and rotated its key",
        )

        today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        exported = tally_client.ExportsApi(client).create_export(
            CreateExportRequest.from_dict(
                {
                    "from": (today - timedelta(days=1)).isoformat().replace("+00:00", "Z"),
                    "to": today.isoformat().replace("+00:00", "Z"),
                    "format": "jsonl",
                    # Given: from_dict sets an absent filter to None, which the client sends as null.
                    "filter": {},
                }
            )
        )
        check(bool(exported.data.id), "created an export")


if __name__ == "__main__":
    main()
