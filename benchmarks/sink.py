"""The raw upload baseline of ``bench_sync``: a server that reads each body and answers 204,
nothing else (no token, no hash, no disk). ``python -m benchmarks.sink PORT``."""

from __future__ import annotations

import sys

import uvicorn
from fastapi import FastAPI, Request, Response

app = FastAPI()


@app.api_route("/sink/{name}", methods=["GET", "PUT", "POST"])
async def sink(name: str, request: Request) -> Response:
    await request.body()
    return Response(status_code=204)


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                lifespan="off")
