/**
 * The deployment commands the tests run. docs/deploy.md must show each of them verbatim
 * (test/deploy/docs.test.ts checks), so the documented commands are the tested ones.
 */
export const CHART = 'helm/sluice';
export const PRODUCTION_VALUES = 'helm/sluice/ci/production-values.yaml';

export const HELM_LINT_DEFAULT = `helm lint --strict ${CHART}`;
export const HELM_LINT_PRODUCTION = `helm lint --strict ${CHART} -f ${PRODUCTION_VALUES}`;
export const HELM_TEMPLATE_DEFAULT = `helm template sluice ${CHART}`;
export const HELM_TEMPLATE_PRODUCTION = `helm template sluice ${CHART} -f ${PRODUCTION_VALUES}`;

const COMPOSE_UP = 'docker compose up -d --build';
const COMPOSE_UP_MONITORING = 'docker compose --profile monitoring up -d --build';
const DOCKER_BUILD = 'docker build -f deploy/Dockerfile -t sluice:local .';

export const DOCUMENTED = [
  HELM_LINT_DEFAULT,
  HELM_LINT_PRODUCTION,
  HELM_TEMPLATE_DEFAULT,
  HELM_TEMPLATE_PRODUCTION,
  COMPOSE_UP,
  COMPOSE_UP_MONITORING,
  DOCKER_BUILD,
];
