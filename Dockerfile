# One image for the scripted provider and the worker (docker-compose.yml picks
# the command). No Temporal CLI inside: the compose file provides the server.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
# tsx (a devDependency: the package ships compiled code) runs the sources here,
# as `npm run worker` does in a checkout, so the image installs dev dependencies too.
RUN SKIP_TEMPORAL_CLI_INSTALL=1 npm ci --no-audit --no-fund
COPY common ./common
COPY node ./node
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY client ./client
COPY examples ./examples
COPY dev/provider ./dev/provider
COPY bin ./bin
COPY tsconfig.json ./
ENV NODE_ENV=production
CMD ["npm", "run", "worker"]
