import { type DomainName, EndpointType, type RestApi, SecurityPolicy } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { Construct } from 'constructs';
import type { CustomDomainConfig } from '#infra/config';

/**
 * The custom domain of the API, mapped to its stage. `scope` holds the imported certificate; the domain
 * itself belongs to the REST API.
 */
export function addCustomDomain(scope: Construct, restApi: RestApi, domain: CustomDomainConfig): DomainName {
  return restApi.addDomainName('CustomDomain', {
    domainName: domain.domainName,
    certificate: Certificate.fromCertificateArn(scope, 'Certificate', domain.certificateArn),
    endpointType: EndpointType.REGIONAL,
    securityPolicy: SecurityPolicy.TLS_1_2,
  });
}
