"""The fidelity suite (issue 33): does every imported operation become a request the API's
own document accepts? For each document, one schema-valid argument object per tool goes
through the runtime's ``Upstream`` to a local upstream on 127.0.0.1, and ``openapi-core``
(an independent validator) checks what arrived against the document; the fields of form
and multipart bodies must also be what the caller meant (files as their bytes, one field
per array item, part headers on their parts). The parts are in ``fidelity.py``; the
documents are those of ``fixtures/openapi-real`` and ``fixtures/openapi-fidelity``:
``wire-kinds-3.0.json`` (every body and parameter kind, with ``encoding`` objects, part
headers and reserved header parameters) and ``wire-kinds-swagger-2.0.json`` (``formData``
in form and multipart bodies, ``file`` parameters, every ``collectionFormat``). mcpgen
imports a Swagger 2.0 document as written; openapi-core reads OpenAPI 3 only, so it checks
the requests against the document's conversion by ``swagger2openapi``
(``fixtures/openapi-fidelity/converted``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fidelity import calls

pytestmark = pytest.mark.timeout(120)
FIXTURES = Path(__file__).resolve().parent / "fixtures"
DOCUMENTS = sorted((FIXTURES / "openapi-real").glob("*-[23].*.json")) + sorted(
    (FIXTURES / "openapi-fidelity").glob("*.json")
)


@pytest.mark.filterwarnings("ignore:Unsupported scheme type")
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.stem)
def test_every_operation_sends_a_request_the_document_accepts(document: Path) -> None:
    outcomes = calls(document)
    assert outcomes, "no operations imported"
    refused = {o.tool: o.errors for o in outcomes if o.errors}
    assert refused == {}, f"{len(refused)} of {len(outcomes)} calls refused"
