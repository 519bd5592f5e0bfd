FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY domain domain
COPY application application
COPY adapters adapters
COPY projections projections
COPY entrypoints entrypoints
COPY clients/python clients/python
RUN pip install --no-cache-dir ./clients/python
RUN pip install --no-cache-dir .
ENV CALLWRIGHT_HOST=0.0.0.0 CALLWRIGHT_PORT=8000 CALLWRIGHT_DATA_DIR=/data
EXPOSE 8000
CMD ["callwright", "serve"]
